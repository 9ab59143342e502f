//! Every sentence the library writes to a user itself, in every language it answers in: one
//! [`Phrases`] per language, so that a new sentence cannot be added in one language and
//! forgotten in another (the struct has no optional field). Prompts to the model are not here:
//! they are written in English whatever the question's language (`run::prompts`).

use super::question::language::Language;

/// The sentences of one language. Templates hold their placeholders in braces.
#[derive(Debug)]
pub struct Phrases {
    /// An in-scope question the available information cannot answer.
    pub idk: &'static str,
    /// An off-topic request.
    pub refusal: &'static str,
    /// A request to do something (book, change, switch): the assistant only reads.
    pub read_only_refusal: &'static str,
    /// The reply to a greeting or to "what can you do?".
    pub hello: &'static str,
    /// The reply to thanks or goodbye.
    pub welcome: &'static str,
    /// A room name several buildings have: the question's opening around `{name}`…
    pub which_room: &'static str,
    /// … the word between a room and its building …
    pub room_in: &'static str,
    /// … and the word before the last option.
    pub or: &'static str,
    /// A history window longer than one call covers: `{max}` days at most, `{asked}` asked.
    pub window_too_long: &'static str,
    /// A stale reading's age, said after its value: `{age}` is a count and a unit.
    pub reading_age: &'static str,
    /// The units of `{age}`: days, hours, minutes.
    pub age_units: [&'static str; 3],
    /// A room's count written from the occupancy tool's result: `{place}`, `{count}`,
    /// `{capacity}` (the `capacity` phrase, or nothing), `{time}`.
    pub people_count: &'static str,
    /// ` (capacity {capacity})`, after a count.
    pub capacity: &'static str,
    /// A sensor's latest reading written from the tool's result: `{sensor}`, `{place}`,
    /// `{value}`, `{unit}`, `{time}`.
    pub latest_reading: &'static str,
    /// The names of temperature, humidity, noise, light and occupancy in `{sensor}` (CO2 and
    /// PM2.5 keep their symbols).
    pub sensor_names: [&'static str; 5],
    /// A past window summarised from the history tool's result: `{sensor}`, `{place}`,
    /// `{from}`, `{to}`, `{low}`/`{high}`/`{latest}` with their `{low_at}`/`{high_at}`/
    /// `{latest_at}`, `{mean}` (values with their unit).
    pub history_summary: &'static str,
    /// A room without a sensor of the asked type: `{place}`, `{sensor}`.
    pub no_sensor: &'static str,
    /// A sensor that has not reported recently: `{sensor}`, `{place}`.
    pub no_recent_reading: &'static str,
}

/// The sentences in `language`.
pub fn phrases(language: Language) -> &'static Phrases {
    match language {
        Language::English => &ENGLISH,
        Language::German => &GERMAN,
        Language::French => &FRENCH,
        Language::Spanish => &SPANISH,
        Language::Italian => &ITALIAN,
        Language::Dutch => &DUTCH,
        Language::Portuguese => &PORTUGUESE,
    }
}

/// A fixed sentence of the library (IDK, the refusals, the greeting replies) written in
/// English, in `language`; `None` for any other text, or for English.
pub fn translated(sentence: &str, language: Language) -> Option<&'static str> {
    if language == Language::English {
        return None;
    }
    let fixed = |p: &'static Phrases| [p.idk, p.refusal, p.read_only_refusal, p.hello, p.welcome];
    let index = fixed(&ENGLISH)
        .iter()
        .position(|english| *english == sentence.trim())?;
    Some(fixed(phrases(language))[index])
}

/// The English sentences, which the library's constants (`IDK_MARKER`, `REFUSAL`) are.
pub const ENGLISH: Phrases = Phrases {
    idk: "I don't know based on the available CrowdVision information.",
    refusal: "I can only help with CrowdVision: buildings, rooms, occupancy, sensors and how the \
              platform works.",
    read_only_refusal: "I can only help with CrowdVision by reading its data: I cannot book \
                        rooms, change settings or control devices. I can tell you about your \
                        buildings, rooms, occupancy and sensors.",
    hello: "Hello! I answer questions about CrowdVision: your buildings and rooms, live \
            occupancy and sensor readings, their history, and how the platform works (setup, \
            sensors, units, roles and troubleshooting). What would you like to know?",
    welcome: "You're welcome. Ask me any time about your buildings, rooms, occupancy or sensors.",
    which_room: "Several of your buildings have a {name}. Which one do you mean",
    room_in: "in",
    or: "or",
    window_too_long: "A sensor history covers at most {max} days, and {asked} days were asked \
                      for, so no readings were returned. Ask for the last {max} days or a \
                      shorter window instead.",
    reading_age: "This reading is {age} old and may not be current.",
    age_units: ["days", "hours", "minutes"],
    people_count: "{place} has {count} people{capacity}, as of {time}.",
    capacity: " (capacity {capacity})",
    latest_reading: "The latest {sensor} reading in {place} is {value} {unit}, measured at {time}.",
    sensor_names: ["temperature", "humidity", "noise", "light", "occupancy"],
    history_summary: "{sensor} in {place} from {from} to {to}: lowest {low} at {low_at}, highest {high} at {high_at}, mean {mean}; latest {latest} at {latest_at}.",
    no_sensor: "{place} has no {sensor} sensor.",
    no_recent_reading: "The {sensor} sensor in {place} has no recent reading.",
};

const GERMAN: Phrases = Phrases {
    idk: "Das weiß ich anhand der verfügbaren CrowdVision-Informationen nicht.",
    refusal: "Ich kann nur bei CrowdVision helfen: Gebäude, Räume, Belegung, Sensoren und wie \
              die Plattform funktioniert.",
    read_only_refusal: "Ich kann bei CrowdVision nur Daten lesen: Ich kann keine Räume buchen, \
                        keine Einstellungen ändern und keine Geräte steuern. Ich kann Ihnen \
                        etwas über Ihre Gebäude, Räume, Belegung und Sensoren sagen.",
    hello: "Hallo! Ich beantworte Fragen zu CrowdVision: Ihre Gebäude und Räume, die aktuelle \
            Belegung und Sensorwerte, deren Verlauf und wie die Plattform funktioniert \
            (Einrichtung, Sensoren, Einheiten, Rollen und Fehlerbehebung). Was möchten Sie \
            wissen?",
    welcome: "Gern geschehen. Fragen Sie mich jederzeit zu Ihren Gebäuden, Räumen, zur Belegung \
              oder zu Sensoren.",
    which_room: "Mehrere Ihrer Gebäude haben einen Raum {name}. Welchen meinen Sie",
    room_in: "in",
    or: "oder",
    window_too_long: "Ein Sensorverlauf umfasst höchstens {max} Tage; angefragt waren {asked} \
                      Tage, daher wurden keine Messwerte abgerufen. Fragen Sie stattdessen nach \
                      den letzten {max} Tagen oder einem kürzeren Zeitraum.",
    reading_age: "Dieser Messwert ist {age} alt und womöglich nicht mehr aktuell.",
    age_units: ["Tage", "Stunden", "Minuten"],
    people_count: "In {place} sind {count} Personen{capacity}, Stand {time}.",
    capacity: " (Kapazität {capacity})",
    latest_reading:
        "Der letzte Wert für {sensor} in {place} ist {value} {unit}, gemessen um {time}.",
    sensor_names: ["Temperatur", "Luftfeuchtigkeit", "Lautstärke", "Helligkeit", "Belegung"],
    history_summary: "{sensor} in {place} von {from} bis {to}: niedrigster Wert {low} um {low_at}, höchster Wert {high} um {high_at}, Mittelwert {mean}; zuletzt {latest} um {latest_at}.",
    no_sensor: "In {place} ist kein Sensor für {sensor} installiert.",
    no_recent_reading: "Der Sensor für {sensor} in {place} hat keinen aktuellen Messwert.",
};

const FRENCH: Phrases = Phrases {
    idk: "Je ne le sais pas d'après les informations CrowdVision disponibles.",
    refusal: "Je ne peux aider que pour CrowdVision : bâtiments, salles, occupation, capteurs \
              et fonctionnement de la plateforme.",
    read_only_refusal: "Je ne peux aider pour CrowdVision qu'en lisant ses données : je ne peux \
                        pas réserver de salles, modifier des réglages ni piloter des appareils. \
                        Je peux vous renseigner sur vos bâtiments, salles, l'occupation et les \
                        capteurs.",
    hello: "Bonjour ! Je réponds aux questions sur CrowdVision : vos bâtiments et salles, \
            l'occupation et les mesures des capteurs en direct, leur historique et le \
            fonctionnement de la plateforme (installation, capteurs, unités, rôles et \
            dépannage). Que voulez-vous savoir ?",
    welcome: "Je vous en prie. Interrogez-moi quand vous voulez sur vos bâtiments, salles, \
              l'occupation ou les capteurs.",
    which_room: "Plusieurs de vos bâtiments ont une salle {name}. Laquelle voulez-vous dire",
    room_in: "à",
    or: "ou",
    window_too_long: "Un historique de capteur couvre au plus {max} jours ; {asked} jours ont \
                      été demandés, donc aucune mesure n'a été renvoyée. Demandez plutôt les \
                      {max} derniers jours ou une période plus courte.",
    reading_age: "Cette mesure date d'il y a {age} et n'est peut-être plus actuelle.",
    age_units: ["jours", "heures", "minutes"],
    people_count: "Il y a {count} personnes dans {place}{capacity}, à {time}.",
    capacity: " (capacité {capacity})",
    latest_reading:
        "La dernière mesure de {sensor} dans {place} est de {value} {unit}, relevée à {time}.",
    sensor_names: ["température", "humidité", "bruit", "lumière", "occupation"],
    history_summary: "{sensor} dans {place} du {from} au {to} : minimum {low} à {low_at}, maximum {high} à {high_at}, moyenne {mean} ; dernière valeur {latest} à {latest_at}.",
    no_sensor: "Il n'y a pas de capteur de {sensor} dans {place}.",
    no_recent_reading: "Le capteur de {sensor} dans {place} n'a pas de mesure récente.",
};

const SPANISH: Phrases = Phrases {
    idk: "No lo sé con la información de CrowdVision disponible.",
    refusal: "Solo puedo ayudar con CrowdVision: edificios, salas, ocupación, sensores y el \
              funcionamiento de la plataforma.",
    read_only_refusal: "Solo puedo ayudar con CrowdVision leyendo sus datos: no puedo reservar \
                        salas, cambiar ajustes ni controlar dispositivos. Puedo informarle sobre \
                        sus edificios, salas, ocupación y sensores.",
    hello: "¡Hola! Respondo preguntas sobre CrowdVision: sus edificios y salas, la ocupación y \
            las lecturas de los sensores en directo, su historial y el funcionamiento de la \
            plataforma (instalación, sensores, unidades, roles y resolución de problemas). ¿Qué \
            le gustaría saber?",
    welcome: "De nada. Pregúnteme cuando quiera sobre sus edificios, salas, ocupación o \
              sensores.",
    which_room: "Varios de sus edificios tienen una sala {name}. ¿Cuál quiere decir",
    room_in: "en",
    or: "o",
    window_too_long: "Un historial de sensor abarca como máximo {max} días y se pidieron \
                      {asked} días, así que no se devolvió ninguna lectura. Pida en su lugar los \
                      últimos {max} días o un periodo más corto.",
    reading_age: "Esta lectura es de hace {age} y puede no estar actualizada.",
    age_units: ["días", "horas", "minutos"],
    people_count: "Hay {count} personas en {place}{capacity}, a las {time}.",
    capacity: " (capacidad {capacity})",
    latest_reading:
        "La última lectura de {sensor} en {place} es {value} {unit}, medida a las {time}.",
    sensor_names: ["temperatura", "humedad", "ruido", "luz", "ocupación"],
    history_summary: "{sensor} en {place} desde {from} hasta {to}: mínimo {low} a las {low_at}, máximo {high} a las {high_at}, media {mean}; último valor {latest} a las {latest_at}.",
    no_sensor: "No hay ningún sensor de {sensor} en {place}.",
    no_recent_reading: "El sensor de {sensor} en {place} no tiene ninguna lectura reciente.",
};

const ITALIAN: Phrases = Phrases {
    idk: "Non lo so in base alle informazioni CrowdVision disponibili.",
    refusal: "Posso aiutare solo con CrowdVision: edifici, stanze, occupazione, sensori e il \
              funzionamento della piattaforma.",
    read_only_refusal: "Posso aiutare con CrowdVision solo leggendo i suoi dati: non posso \
                        prenotare stanze, cambiare impostazioni o comandare dispositivi. Posso \
                        parlarle dei suoi edifici, stanze, occupazione e sensori.",
    hello: "Ciao! Rispondo a domande su CrowdVision: i suoi edifici e le stanze, l'occupazione \
            e le letture dei sensori in tempo reale, il loro storico e il funzionamento della \
            piattaforma (installazione, sensori, unità, ruoli e risoluzione dei problemi). Cosa \
            vorrebbe sapere?",
    welcome: "Prego. Mi chieda quando vuole dei suoi edifici, stanze, occupazione o sensori.",
    which_room: "Diversi suoi edifici hanno una sala {name}. Quale intende",
    room_in: "in",
    or: "o",
    window_too_long: "Uno storico dei sensori copre al massimo {max} giorni e ne sono stati \
                      chiesti {asked}, quindi non è stata restituita alcuna lettura. Chieda \
                      invece gli ultimi {max} giorni o un periodo più breve.",
    reading_age: "Questa lettura risale a {age} fa e potrebbe non essere attuale.",
    age_units: ["giorni", "ore", "minuti"],
    people_count: "Ci sono {count} persone in {place}{capacity}, alle {time}.",
    capacity: " (capienza {capacity})",
    latest_reading:
        "L'ultima lettura di {sensor} in {place} è {value} {unit}, misurata alle {time}.",
    sensor_names: ["temperatura", "umidità", "rumore", "luce", "occupazione"],
    history_summary: "{sensor} in {place} dal {from} al {to}: minimo {low} alle {low_at}, massimo {high} alle {high_at}, media {mean}; ultimo valore {latest} alle {latest_at}.",
    no_sensor: "In {place} non è installato nessun sensore di {sensor}.",
    no_recent_reading: "Il sensore di {sensor} in {place} non ha una lettura recente.",
};

const DUTCH: Phrases = Phrases {
    idk: "Dat weet ik niet op basis van de beschikbare CrowdVision-informatie.",
    refusal: "Ik kan alleen helpen met CrowdVision: gebouwen, ruimtes, bezetting, sensoren en \
              hoe het platform werkt.",
    read_only_refusal: "Ik kan alleen helpen met CrowdVision door de gegevens te lezen: ik kan \
                        geen ruimtes boeken, instellingen wijzigen of apparaten bedienen. Ik kan \
                        u vertellen over uw gebouwen, ruimtes, bezetting en sensoren.",
    hello: "Hallo! Ik beantwoord vragen over CrowdVision: uw gebouwen en ruimtes, de actuele \
            bezetting en sensormetingen, hun geschiedenis en hoe het platform werkt \
            (installatie, sensoren, eenheden, rollen en probleemoplossing). Wat wilt u weten?",
    welcome: "Graag gedaan. Vraag me altijd naar uw gebouwen, ruimtes, bezetting of sensoren.",
    which_room: "Meerdere van uw gebouwen hebben een ruimte {name}. Welke bedoelt u",
    room_in: "in",
    or: "of",
    window_too_long: "Een sensorgeschiedenis beslaat hoogstens {max} dagen en er werden {asked} \
                      dagen gevraagd, dus er zijn geen metingen teruggegeven. Vraag in plaats \
                      daarvan naar de laatste {max} dagen of een kortere periode.",
    reading_age: "Deze meting is {age} oud en mogelijk niet meer actueel.",
    age_units: ["dagen", "uur", "minuten"],
    people_count: "Er zijn {count} personen in {place}{capacity}, om {time}.",
    capacity: " (capaciteit {capacity})",
    latest_reading:
        "De laatste meting van {sensor} in {place} is {value} {unit}, gemeten om {time}.",
    sensor_names: ["temperatuur", "luchtvochtigheid", "geluid", "licht", "bezetting"],
    history_summary: "{sensor} in {place} van {from} tot {to}: laagste waarde {low} om {low_at}, hoogste waarde {high} om {high_at}, gemiddelde {mean}; laatste waarde {latest} om {latest_at}.",
    no_sensor: "In {place} is geen sensor voor {sensor} geïnstalleerd.",
    no_recent_reading: "De sensor voor {sensor} in {place} heeft geen recente meting.",
};

const PORTUGUESE: Phrases = Phrases {
    idk: "Não sei com base nas informações do CrowdVision disponíveis.",
    refusal: "Só posso ajudar com o CrowdVision: edifícios, salas, ocupação, sensores e o \
              funcionamento da plataforma.",
    read_only_refusal: "Só posso ajudar com o CrowdVision lendo os seus dados: não posso \
                        reservar salas, alterar definições nem controlar dispositivos. Posso \
                        falar-lhe dos seus edifícios, salas, ocupação e sensores.",
    hello: "Olá! Respondo a perguntas sobre o CrowdVision: os seus edifícios e salas, a \
            ocupação e as leituras dos sensores em direto, o seu histórico e o funcionamento da \
            plataforma (instalação, sensores, unidades, funções e resolução de problemas). O \
            que gostaria de saber?",
    welcome: "De nada. Pergunte-me quando quiser sobre os seus edifícios, salas, ocupação ou \
              sensores.",
    which_room: "Vários dos seus edifícios têm uma sala {name}. Qual quer dizer",
    room_in: "em",
    or: "ou",
    window_too_long: "Um histórico de sensor abrange no máximo {max} dias e foram pedidos \
                      {asked} dias, por isso nenhuma leitura foi devolvida. Peça antes os \
                      últimos {max} dias ou um período mais curto.",
    reading_age: "Esta leitura é de há {age} e pode não estar atualizada.",
    age_units: ["dias", "horas", "minutos"],
    people_count: "Há {count} pessoas em {place}{capacity}, às {time}.",
    capacity: " (capacidade {capacity})",
    latest_reading: "A última leitura de {sensor} em {place} é {value} {unit}, medida às {time}.",
    sensor_names: ["temperatura", "umidade", "ruído", "luz", "ocupação"],
    history_summary: "{sensor} em {place} de {from} até {to}: mínimo {low} às {low_at}, máximo {high} às {high_at}, média {mean}; último valor {latest} às {latest_at}.",
    no_sensor: "Não há nenhum sensor de {sensor} em {place}.",
    no_recent_reading: "O sensor de {sensor} em {place} não tem nenhuma leitura recente.",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Each phrase of each language: written, with the placeholders its English one has, and
    /// not left in English.
    #[test]
    fn every_phrase_exists_in_every_language() {
        let fields = |p: &'static Phrases| {
            [
                ("idk", p.idk),
                ("refusal", p.refusal),
                ("read_only_refusal", p.read_only_refusal),
                ("hello", p.hello),
                ("welcome", p.welcome),
                ("which_room", p.which_room),
                ("room_in", p.room_in),
                ("or", p.or),
                ("window_too_long", p.window_too_long),
                ("reading_age", p.reading_age),
                ("age_units", p.age_units[0]),
                ("age_units", p.age_units[1]),
                ("age_units", p.age_units[2]),
                ("people_count", p.people_count),
                ("capacity", p.capacity),
                ("latest_reading", p.latest_reading),
                ("history_summary", p.history_summary),
                ("no_sensor", p.no_sensor),
                ("no_recent_reading", p.no_recent_reading),
            ]
        };
        for language in Language::ALL {
            for ((name, text), (_, english)) in
                fields(phrases(language)).into_iter().zip(fields(&ENGLISH))
            {
                assert!(!text.trim().is_empty(), "{language:?} {name}");
                for placeholder in [
                    "{name}",
                    "{max}",
                    "{asked}",
                    "{age}",
                    "{place}",
                    "{count}",
                    "{capacity}",
                    "{time}",
                    "{sensor}",
                    "{value}",
                    "{unit}",
                ] {
                    assert_eq!(
                        text.contains(placeholder),
                        english.contains(placeholder),
                        "{language:?} {name} {placeholder}"
                    );
                }
                if language != Language::English && text.split_whitespace().count() > 3 {
                    assert_ne!(text, english, "{language:?} {name} is English");
                    // Read without its placeholders, whose names are English.
                    let prose: String = text
                        .split('{')
                        .map(|part| part.split_once('}').map_or(part, |(_, after)| after))
                        .collect();
                    assert_eq!(
                        crate::agent::question::language::detect(&prose),
                        Some(language),
                        "{language:?} {name}: {text}"
                    );
                }
            }
        }
    }

    #[test]
    fn fixed_sentences_translate_and_others_do_not() {
        assert_eq!(translated(ENGLISH.idk, Language::German), Some(GERMAN.idk));
        assert_eq!(
            translated(ENGLISH.hello, Language::French),
            Some(FRENCH.hello)
        );
        assert_eq!(translated(ENGLISH.idk, Language::English), None);
        assert_eq!(
            translated("Room hq-201 holds 6 people.", Language::German),
            None
        );
    }
}
