//! Token usage summed over the hops of one answer, and its cost: the provider's own figure when
//! it reports one (OpenRouter's `usage.cost`), and always an estimate from a price table. Pure.

use crate::contract::Usage;

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub prompt_per_million: f64,
    pub completion_per_million: f64,
}

#[derive(Debug, Clone)]
pub struct PriceTable {
    prices: Vec<(String, Price)>,
}

impl Default for PriceTable {
    /// List prices of the default answer and judge models.
    fn default() -> Self {
        PriceTable {
            prices: vec![
                ("openai/gpt-4o-mini".into(), price(0.15, 0.60)),
                ("openai/gpt-4o".into(), price(2.50, 10.00)),
                ("google/gemini-2.5-flash".into(), price(0.30, 2.50)),
                ("openai/text-embedding-3-small".into(), price(0.02, 0.0)),
            ],
        }
    }
}

fn price(prompt: f64, completion: f64) -> Price {
    Price {
        prompt_per_million: prompt,
        completion_per_million: completion,
    }
}

impl PriceTable {
    /// The default table with `MODEL_PRICES` applied.
    pub fn with_overrides(overrides: &[crate::config::ModelPrice]) -> PriceTable {
        let mut table = PriceTable::default();
        for entry in overrides {
            table.set(
                &entry.model,
                Price {
                    prompt_per_million: entry.prompt_per_million,
                    completion_per_million: entry.completion_per_million,
                },
            );
        }
        table
    }

    /// As [`PriceTable::estimate`], pricing a dated variant the provider reports
    /// (`openai/gpt-4o-mini-2024-07-18`) as its base model when the variant is not listed.
    pub fn estimate_served(&self, model: &str, usage: &Usage) -> Option<f64> {
        let mut candidate = model;
        loop {
            if let Some(usd) = self.estimate(candidate, usage) {
                return Some(usd);
            }
            candidate = candidate.rsplit_once('-')?.0;
        }
    }

    /// Adds or replaces a model's price.
    pub fn set(&mut self, model: &str, price: Price) {
        self.prices.retain(|(m, _)| m != model);
        self.prices.push((model.to_string(), price));
    }

    pub fn estimate(&self, model: &str, usage: &Usage) -> Option<f64> {
        let (_, price) = self.prices.iter().find(|(m, _)| m == model)?;
        Some(
            (usage.prompt_tokens as f64 * price.prompt_per_million
                + usage.completion_tokens as f64 * price.completion_per_million)
                / 1_000_000.0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Cost;

    #[test]
    fn usage_sums_over_hops() {
        let mut total = Usage::default();
        total += Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 120,
            ..Usage::default()
        };
        total += Usage {
            prompt_tokens: 300,
            completion_tokens: 50,
            total_tokens: 350,
            ..Usage::default()
        };
        assert_eq!(
            total,
            Usage {
                prompt_tokens: 400,
                completion_tokens: 70,
                total_tokens: 470,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn estimates_come_from_the_table() {
        let table = PriceTable::default();
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            total_tokens: 1_500_000,
            ..Usage::default()
        };
        let usd = table.estimate("openai/gpt-4o-mini", &usage).unwrap();
        assert!((usd - 0.45).abs() < 1e-9, "{usd}");
        assert_eq!(table.estimate("unknown/model", &usage), None);
    }

    #[test]
    fn provider_cost_is_only_present_when_reported() {
        let mut cost = Cost::default();
        cost.add_provider(None);
        assert_eq!(cost.provider_usd, None);
        cost.add_provider(Some(0.001));
        cost.add_provider(Some(0.002));
        assert!((cost.provider_usd.unwrap() - 0.003).abs() < 1e-12);
    }

    #[test]
    fn dated_model_variants_are_priced_as_their_base() {
        let table = PriceTable::default();
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 0,
            total_tokens: 1_000_000,
            ..Usage::default()
        };
        assert_eq!(
            table.estimate_served("openai/gpt-4o-mini-2024-07-18", &usage),
            table.estimate("openai/gpt-4o-mini", &usage)
        );
        assert!(table
            .estimate_served("openai/gpt-4o-mini", &usage)
            .is_some());
        assert_eq!(table.estimate_served("local/unknown-model", &usage), None);
    }

    #[test]
    fn prices_can_be_overridden() {
        let mut table = PriceTable::default();
        table.set("openai/gpt-4o-mini", price(1.0, 1.0));
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 0,
            total_tokens: 1_000_000,
            ..Usage::default()
        };
        assert_eq!(table.estimate("openai/gpt-4o-mini", &usage), Some(1.0));
    }
}
