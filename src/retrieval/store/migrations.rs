//! A small migration runner shared by both adapters. Migration files live in
//! `migrations/<backend>/NNNN_name.sql`, are embedded at build time, and may use
//! `${EMBEDDING_DIM}`, substituted when applied (the vector column's size is part of the schema).

pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

impl Migration {
    pub fn render(&self, dim: usize) -> String {
        self.sql.replace("${EMBEDDING_DIM}", &dim.to_string())
    }
}

pub const POSTGRES: &[Migration] = &[
    Migration {
        version: 1,
        name: "knowledge_base",
        sql: include_str!("../../../migrations/postgres/0001_knowledge_base.sql"),
    },
    Migration {
        version: 2,
        name: "caller_limits",
        sql: include_str!("../../../migrations/postgres/0002_caller_limits.sql"),
    },
    Migration {
        version: 3,
        name: "keyword_index",
        sql: include_str!("../../../migrations/postgres/0003_keyword_index.sql"),
    },
    Migration {
        version: 4,
        name: "conversations",
        sql: include_str!("../../../migrations/postgres/0004_conversations.sql"),
    },
];

pub const SQLITE: &[Migration] = &[
    Migration {
        version: 1,
        name: "knowledge_base",
        sql: include_str!("../../../migrations/sqlite/0001_knowledge_base.sql"),
    },
    Migration {
        version: 2,
        name: "keyword_index",
        sql: include_str!("../../../migrations/sqlite/0002_keyword_index.sql"),
    },
    Migration {
        version: 3,
        name: "conversations",
        sql: include_str!("../../../migrations/sqlite/0003_conversations.sql"),
    },
];

/// Versions in `all` that are not in `applied`.
pub fn pending(all: &[Migration], applied: &[u32]) -> Vec<u32> {
    all.iter()
        .map(|m| m.version)
        .filter(|v| !applied.contains(v))
        .collect()
}
