//! `get_sensor_history`: the readings of one sensor type of a room over a bounded window. Short
//! series go back point by point; long ones as overall figures plus up to [`BUCKETS`] time
//! buckets, so a month of minute readings never floods the model.

use super::{no_sensor_note, note_dropped, room, room_name, unavailable, LiveData, Reached};
use crate::agent::tools::{result_schema, Tool, ToolContext, ToolError, ToolErrorKind};
use crate::downstream::{HistoryPoint, HistoryQuery};
use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The default window, ending now.
const DEFAULT_WINDOW_HOURS: i64 = 24;
/// The longest window one call may ask for: what the user documentation promises
/// (`user/readings-and-history.md`), so the tool and the page agree.
pub const MAX_WINDOW_DAYS: i64 = 7;
/// Series up to this long are returned point by point: about as many prompt tokens as the
/// [`BUCKETS`] of a summary (each point is a timestamp and a value).
const MAX_RAW_POINTS: usize = 24;
/// Time buckets of a summarised series: a day in two-hour buckets. With 24, a day's CO2 history
/// took the request past the 4,096-token context of a small local model.
pub const BUCKETS: usize = 12;
/// Points read from one answer at most; the rest are dropped as an oversized answer.
const MAX_POINTS: usize = 50_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// Building id (from list_buildings).
    pub building_id: String,
    /// Room id (from get_building).
    pub room_id: String,
    /// occupancy, co2, temperature, humidity, noise, light or pm25.
    pub sensor_type: String,
    /// Window start, RFC 3339 or a date; default 24 hours before `to`.
    #[serde(default)]
    pub from: Option<String>,
    /// Window end, RFC 3339 or a date; default now.
    #[serde(default)]
    pub to: Option<String>,
}

pub struct GetSensorHistory(pub LiveData);

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub count: usize,
    #[serde(serialize_with = "two_decimals")]
    pub min: f64,
    #[serde(serialize_with = "two_decimals")]
    pub max: f64,
    #[serde(serialize_with = "two_decimals")]
    pub mean: f64,
}

/// One time bucket of a summarised series. Its end (the next bucket's start, the last one's
/// the window's end) and its count stay out of the result: with them, a day's twelve buckets
/// cost a small model some 300 more prompt tokens, about four seconds on two CPU cores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    #[serde(serialize_with = "to_the_second")]
    pub start: DateTime<Utc>,
    #[serde(skip)]
    pub end: DateTime<Utc>,
    #[serde(skip)]
    pub count: usize,
    #[serde(serialize_with = "two_decimals")]
    pub min: f64,
    #[serde(serialize_with = "two_decimals")]
    pub max: f64,
    #[serde(serialize_with = "two_decimals")]
    pub mean: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistorySummary {
    #[serde(flatten)]
    pub overall: Stats,
    pub first: Point,
    pub last: Point,
    /// The lowest and the highest reading, with when (the first such when several are).
    pub low: Point,
    pub high: Point,
    pub buckets: Vec<Bucket>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    #[serde(serialize_with = "to_the_second")]
    pub ts: DateTime<Utc>,
    #[serde(serialize_with = "two_decimals")]
    pub value: f64,
}

// What the model reads is kept short: a timestamp's nanoseconds and a mean's fifteen
// decimals cost tokens and say nothing.
fn to_the_second<S: serde::Serializer>(time: &DateTime<Utc>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(&second_text(*time))
}

fn second_text(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn two_decimals<S: serde::Serializer>(value: &f64, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_f64((value * 100.0).round() / 100.0)
}

fn stats(values: impl Iterator<Item = f64>) -> Option<Stats> {
    let (mut count, mut min, mut max, mut sum) = (0usize, f64::INFINITY, f64::NEG_INFINITY, 0.0);
    for value in values {
        count += 1;
        min = min.min(value);
        max = max.max(value);
        sum += value;
    }
    (count > 0).then(|| Stats {
        count,
        min,
        max,
        mean: sum / count as f64,
    })
}

/// Overall figures and up to [`BUCKETS`] equal time buckets (empty ones left out) of `points`,
/// which are sorted by time. Pure.
pub fn summarise(
    points: &[Point],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<HistorySummary> {
    let overall = stats(points.iter().map(|p| p.value))?;
    let span = (to - from).num_milliseconds().max(1);
    let width = (span + BUCKETS as i64 - 1) / BUCKETS as i64;
    let buckets = (0..BUCKETS as i64)
        .filter_map(|i| {
            let start = from + Duration::milliseconds(i * width);
            let end = (start + Duration::milliseconds(width)).min(to);
            let last_bucket = i == BUCKETS as i64 - 1;
            let inside = points
                .iter()
                .filter(|p| p.ts >= start && (p.ts < end || (last_bucket && p.ts <= end)));
            stats(inside.map(|p| p.value)).map(|stats| Bucket {
                start,
                end,
                count: stats.count,
                min: stats.min,
                max: stats.max,
                mean: stats.mean,
            })
        })
        .collect();
    let lowest = |a: &&Point, b: &&Point| a.value.total_cmp(&b.value);
    Some(HistorySummary {
        overall,
        first: points[0],
        last: points[points.len() - 1],
        low: *points.iter().min_by(lowest)?,
        // `max_by` keeps the last of equals; the first highest is the one reached first.
        high: *points.iter().rev().max_by(lowest)?,
        buckets,
    })
}

fn bad_argument(message: String) -> ToolError {
    ToolError::new(ToolErrorKind::BadArguments, message)
}

fn parse_time(field: &str, text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, ToolError> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"] {
        if let Ok(time) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Ok(time.and_utc());
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date.and_time(chrono::NaiveTime::MIN).and_utc());
    }
    if let Some(time) = relative_time(text, now) {
        return Ok(time);
    }
    Err(bad_argument(format!(
        "{field} must be RFC 3339 (2026-11-30T08:00:00Z), a date (2026-11-30), \"now\" or \"24 hours ago\"; leave it out for the last 24 hours"
    )))
}

/// "now", "24 hours ago", "24 hours before now", "last 7 days", "-24h", "now-2d": the relative
/// times small models write instead of timestamps.
fn relative_time(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let text = text.to_lowercase();
    let text = text.trim();
    if text == "now" {
        return Some(now);
    }
    let ago = ["ago", "before now", "earlier"]
        .iter()
        .find_map(|suffix| text.strip_suffix(suffix))
        .or_else(|| {
            [
                "now-",
                "now -",
                "now minus",
                "-",
                "last",
                "past",
                "the last",
                "the past",
            ]
            .iter()
            .find_map(|prefix| text.strip_prefix(prefix))
        })?
        .trim();
    let digits: String = ago.chars().take_while(|c| c.is_ascii_digit()).collect();
    let count: i64 = digits.parse().ok()?;
    let unit = ago[digits.len()..].trim();
    let length = match unit {
        "m" | "min" | "mins" | "minute" | "minutes" => Duration::minutes(count),
        "h" | "hour" | "hours" => Duration::hours(count),
        "d" | "day" | "days" => Duration::days(count),
        "w" | "week" | "weeks" => Duration::weeks(count),
        _ => return None,
    };
    Some(now - length)
}

/// A field that holds text; an empty one counts as left out.
fn given(field: Option<&str>) -> Option<&str> {
    field.filter(|text| !text.trim().is_empty())
}

/// "14 days" (to the nearest day) for a span of two days or more, "30 hours" for two hours or
/// more, else "90 minutes".
fn span_in_words(span: Duration) -> String {
    let hours = span.num_hours();
    if hours >= 48 {
        format!("{} days", (hours + 12) / 24)
    } else if hours >= 2 {
        format!("{hours} hours")
    } else {
        format!("{} minutes", span.num_minutes())
    }
}

/// The window asked for `sensor_type`'s readings, checked: `from` before `to`, at most
/// [`MAX_WINDOW_DAYS`] long. A longer one is refused with the whole reason, so that the
/// answer can pass it on (and quote its figures).
pub fn window(
    sensor_type: &str,
    from: Option<&str>,
    to: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(DateTime<Utc>, DateTime<Utc>), ToolError> {
    // An empty field is a field left out: small models often send `"from": ""`.
    let to = given(to)
        .map(|t| parse_time("to", t, now))
        .transpose()?
        .unwrap_or(now);
    let from = match given(from) {
        Some(text) => parse_time("from", text, now)?,
        None => to - Duration::hours(DEFAULT_WINDOW_HOURS),
    };
    if from >= to {
        return Err(bad_argument("from must be before to".into()));
    }
    let asked = to - from;
    if asked > Duration::days(MAX_WINDOW_DAYS) {
        return Err(bad_argument(format!(
            "a history window may be at most {MAX_WINDOW_DAYS} days long and {} were asked \
             for; no {sensor_type} readings were returned. Tell the user that a history window \
             may be at most {MAX_WINDOW_DAYS} days long, and offer the last {MAX_WINDOW_DAYS} \
             days or a shorter window",
            span_in_words(asked)
        )));
    }
    Ok((from, to))
}

#[async_trait]
impl Tool for GetSensorHistory {
    type Args = HistoryArgs;

    const NAME: &'static str = "get_sensor_history";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(
            &[
                ("building_id", "string"),
                ("room_id", "string"),
                ("room_name", "string|null"),
                ("sensor_type", "string"),
                ("from", "string"),
                ("to", "string"),
                ("unit", "string|null"),
                ("points", "array"),
                ("stats", "object"),
                ("summary", "object"),
                ("note", "string"),
            ],
            &[],
        ))
    }

    fn description(&self) -> &'static str {
        "Readings of one sensor type in a room over a window (default the last 24 hours, at most \
         7 days); long series come back summarised."
    }

    async fn run(
        &self,
        args: HistoryArgs,
        context: ToolContext<'_>,
    ) -> Result<(Value, String), ToolError> {
        let live = &self.0;
        let (from, to) = window(
            &args.sensor_type,
            args.from.as_deref(),
            args.to.as_deref(),
            Utc::now(),
        )?;
        let Reached { building, claims } = live.building(context, &args.building_id).await?;
        let room = room(&building, &args.room_id)?;
        let installed = live
            .sensors
            .sensors(claims, &building.id, Some(&room.id))
            .await
            .map_err(unavailable)?
            .items
            .into_iter()
            .any(|s| {
                s.building_id == building.id
                    && s.room_id == room.id
                    && s.sensor_type.eq_ignore_ascii_case(&args.sensor_type)
            });
        if !installed {
            let note = no_sensor_note(Some(&args.sensor_type.to_ascii_lowercase()), &room.name);
            return Ok((json!({"points": [], "note": note}), note));
        }
        let query = HistoryQuery {
            building_id: &building.id,
            room_id: &room.id,
            sensor_type: &args.sensor_type,
            from,
            to,
        };
        let listed = live
            .sensors
            .history(claims, &query)
            .await
            .map_err(unavailable)?;
        let (points, unit, outside) = usable_points(listed.items, from, to);
        note_dropped("history points", &building.id, listed.dropped + outside);
        let head = json!({
            "building_id": building.id,
            "room_id": room.id,
            "room_name": room_name(&building, &room.id),
            "sensor_type": args.sensor_type,
            "from": second_text(from),
            "to": second_text(to),
            "unit": unit,
        });
        Ok(history_json(head, &points, from, to))
    }
}

/// Points inside the window with a finite value, sorted, one per timestamp; the unit most of
/// them carry; how many were left out.
fn usable_points(
    raw: Vec<HistoryPoint>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (Vec<Point>, Option<String>, usize) {
    let total = raw.len();
    let mut units: Vec<(String, usize)> = Vec::new();
    let mut points: Vec<Point> = raw
        .into_iter()
        .take(MAX_POINTS)
        .filter(|p| p.ts >= from && p.ts <= to && p.value.is_finite())
        .map(|p| {
            if let Some(unit) = p.unit {
                match units.iter_mut().find(|(u, _)| *u == unit) {
                    Some((_, n)) => *n += 1,
                    None => units.push((unit, 1)),
                }
            }
            Point {
                ts: p.ts,
                value: p.value,
            }
        })
        .collect();
    points.sort_by_key(|p| p.ts);
    points.dedup_by_key(|p| p.ts);
    let unit = units.into_iter().max_by_key(|(_, n)| *n).map(|(u, _)| u);
    let left_out = total - points.len();
    (points, unit, left_out)
}

fn history_json(
    mut body: Value,
    points: &[Point],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (Value, String) {
    let Some(summary) = summarise(points, from, to) else {
        body["points"] = json!([]);
        body["note"] = json!("no readings in this window");
        return (body, "no readings in the window".into());
    };
    let line = format!(
        "{} points, {:.1} to {:.1}",
        summary.overall.count, summary.overall.min, summary.overall.max
    );
    if points.len() <= MAX_RAW_POINTS {
        body["points"] = json!(points);
        body["stats"] = json!(summary.overall);
        body["stats"]["low"] = json!(summary.low);
        body["stats"]["high"] = json!(summary.high);
        body["stats"]["last"] = json!(summary.last);
    } else {
        body["summary"] = json!(summary);
        let width = summary
            .buckets
            .first()
            .map_or(Duration::zero(), |b| b.end - b.start);
        body["note"] = json!(format!(
            "{} points summarised in {} buckets of {}, each from its start",
            points.len(),
            summary.buckets.len(),
            span_in_words(width)
        ));
    }
    (body, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
            + Duration::minutes(minutes)
    }

    #[test]
    fn relative_times_and_empty_fields_are_read_as_small_models_write_them() {
        let now = at(0);
        let day = (now - Duration::hours(24), now);
        assert_eq!(window("co2", Some(""), Some(" "), now).unwrap(), day);
        assert_eq!(
            window("co2", Some("24 hours ago"), Some("now"), now).unwrap(),
            day
        );
        assert_eq!(window("co2", Some("-24h"), None, now).unwrap(), day);
        assert_eq!(window("co2", Some("now-1d"), None, now).unwrap(), day);
        assert_eq!(
            window("co2", Some("24 hours before now"), Some("now"), now).unwrap(),
            day
        );
        assert_eq!(
            window("co2", Some("last 24 hours"), None, now).unwrap(),
            day
        );
        assert_eq!(
            window("co2", Some("2026-11-29T00:00:00"), None, now).unwrap(),
            day
        );
        assert_eq!(
            window("co2", Some("7 days ago"), None, now).unwrap().0,
            now - Duration::days(7)
        );
        let error = window("co2", Some("a while ago"), None, now).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::BadArguments);
    }

    #[test]
    fn a_window_past_the_documented_week_is_refused_saying_the_limit() {
        let now = at(0);
        let week = window("co2", Some("7 days ago"), None, now).unwrap();
        assert_eq!(week, (now - Duration::days(7), now));
        let refused = window("co2", Some("14 days ago"), None, now).unwrap_err();
        assert_eq!(refused.kind, ToolErrorKind::BadArguments);
        assert!(
            refused.message.contains("at most 7 days"),
            "{}",
            refused.message
        );
        assert!(
            refused.message.contains("14 days were asked"),
            "{}",
            refused.message
        );
        assert!(
            refused.message.contains("no co2 readings were returned"),
            "{}",
            refused.message
        );
        let almost = window(
            "co2",
            Some("2023-04-01T00:00:00Z"),
            Some("2023-04-14T23:59:59Z"),
            now,
        );
        let almost = almost.unwrap_err().message;
        assert!(almost.contains("14 days were asked"), "{almost}");
    }

    #[test]
    fn windows_default_to_a_day_and_are_bounded() {
        let now = at(0);
        assert_eq!(
            window("co2", None, None, now).unwrap(),
            (now - Duration::hours(24), now)
        );
        let (from, to) = window(
            "co2",
            Some("2026-11-01"),
            Some("2026-11-02T12:00:00+01:00"),
            now,
        )
        .unwrap();
        assert_eq!(from.to_rfc3339(), "2026-11-01T00:00:00+00:00");
        assert_eq!(to.to_rfc3339(), "2026-11-02T11:00:00+00:00");
        for (from, to) in [
            (Some("2026-11-02"), Some("2026-11-01")),
            (Some("2026-09-01"), Some("2026-11-01")),
            (Some("2026-11-01"), Some("2026-11-09")),
            (Some("yesterday"), None),
            (None, Some("30/11/2026")),
        ] {
            assert_eq!(
                window("co2", from, to, now).unwrap_err().kind,
                ToolErrorKind::BadArguments,
                "{from:?} {to:?}"
            );
        }
    }

    #[test]
    fn long_series_are_summarised_in_buckets_that_cover_every_point() {
        let points: Vec<Point> = (0..1440)
            .map(|m| Point {
                ts: at(m),
                value: (m % 100) as f64,
            })
            .collect();
        let summary = summarise(&points, at(0), at(1439)).unwrap();
        assert_eq!(summary.overall.count, 1440);
        assert_eq!((summary.overall.min, summary.overall.max), (0.0, 99.0));
        assert_eq!(summary.buckets.len(), BUCKETS);
        let counted: usize = summary.buckets.iter().map(|b| b.count).sum();
        assert_eq!(counted, 1440);
        assert_eq!(summary.first.ts, at(0));
        assert_eq!(summary.last.ts, at(1439));
        let (body, _) = history_json(json!({}), &points, at(0), at(1439));
        assert!(body.get("points").is_none());
        assert_eq!(body["summary"]["count"], 1440);
        let bucket = &body["summary"]["buckets"][0];
        assert!(bucket.get("end").is_none() && bucket.get("count").is_none());
        assert!(bucket.get("start").is_some() && bucket.get("mean").is_some());
        assert_eq!(
            body["note"],
            "1440 points summarised in 12 buckets of 119 minutes, each from its start"
        );
        assert!(body.to_string().len() < 8_000, "{}", body.to_string().len());
    }

    #[test]
    fn short_series_go_back_point_by_point() {
        let points: Vec<Point> = (0..5)
            .map(|m| Point {
                ts: at(m * 10),
                value: m as f64,
            })
            .collect();
        let (body, summary) = history_json(json!({}), &points, at(0), at(60));
        assert_eq!(body["points"].as_array().unwrap().len(), 5);
        assert_eq!(body["stats"]["mean"], 2.0);
        assert_eq!(summary, "5 points, 0.0 to 4.0");
        let (empty, _) = history_json(json!({}), &[], at(0), at(60));
        assert_eq!(empty["note"], "no readings in this window");
    }

    #[test]
    fn points_outside_the_window_or_not_finite_are_left_out() {
        let raw = vec![
            HistoryPoint {
                ts: at(5),
                value: 1.0,
                unit: Some("ppm".into()),
            },
            HistoryPoint {
                ts: at(-5),
                value: 2.0,
                unit: Some("ppm".into()),
            },
            HistoryPoint {
                ts: at(6),
                value: f64::NAN,
                unit: None,
            },
            HistoryPoint {
                ts: at(1),
                value: 3.0,
                unit: Some("°C".into()),
            },
            HistoryPoint {
                ts: at(7),
                value: 4.0,
                unit: Some("ppm".into()),
            },
        ];
        let (points, unit, left_out) = usable_points(raw, at(0), at(10));
        assert_eq!(
            points.iter().map(|p| p.value).collect::<Vec<_>>(),
            vec![3.0, 1.0, 4.0]
        );
        assert_eq!(unit.as_deref(), Some("ppm"));
        assert_eq!(left_out, 2);
    }
}
