//! The one place the parts are wired: from a [`Config`], the store, the embedder, the provider
//! adapter, the authorizer, the tool registry and the agent, for every subcommand. Nothing else
//! names an adapter's constructor.

use crate::agent::answer::Agent;
use crate::agent::llm::ChatModel;
use crate::agent::openai::OpenAiChat;
use crate::agent::tools::registry::ToolRegistry;
use crate::agent::tools::{live_registry, standard_registry};
use crate::auth::authz::Authorizer;
use crate::config::{Config, ConfigError};
use crate::retrieval::embed::{self, Embedder};
use crate::retrieval::search::{Retriever, SearchError};
use crate::retrieval::store::{self, ChunkStore, StoreError};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Search(#[from] SearchError),
}

/// What an agent is made of, built once: the provider adapter, the tools, the authorizer and
/// the knowledge base.
pub struct AgentParts {
    pub chat: Arc<dyn ChatModel>,
    pub tools: Arc<ToolRegistry>,
    pub authz: Arc<Authorizer>,
    pub retriever: Arc<Retriever>,
}

impl AgentParts {
    /// An agent over these parts with the settings of `config` (its answer model included).
    pub fn agent(&self, config: &Config) -> Agent {
        Agent::from_config(
            config,
            self.chat.clone(),
            self.tools.clone(),
            self.authz.clone(),
        )
    }
}

/// The parts every answering command uses, after checking the provider key and the store.
pub async fn answering(config: &Config) -> Result<AgentParts, ComposeError> {
    let parts = answering_unchecked(config).await?;
    parts.retriever.check_store().await?;
    Ok(parts)
}

/// As [`answering`] without the store check (the server reports it on `/readyz`).
pub async fn answering_unchecked(config: &Config) -> Result<AgentParts, ComposeError> {
    config.require_api_key()?;
    let retriever = Arc::new(Retriever::from_config(config).await?);
    let authz = authorizer(config);
    let tools = standard_registry(config, retriever.clone(), authz.clone());
    Ok(AgentParts {
        chat: chat_model(config),
        tools: Arc::new(tools),
        authz,
        retriever,
    })
}

/// The provider adapter alone (a judge without an agent).
pub fn chat_model(config: &Config) -> Arc<dyn ChatModel> {
    Arc::new(OpenAiChat::new(&config.llm))
}

pub fn authorizer(config: &Config) -> Arc<Authorizer> {
    Arc::new(Authorizer::from_config(config))
}

/// The knowledge base for searching.
pub async fn retriever(config: &Config) -> Result<Retriever, StoreError> {
    Retriever::from_config(config).await
}

/// The tool registry: with `search_docs` over `retriever`, or the live-data tools alone.
pub fn registry(config: &Config, retriever: Option<Retriever>) -> ToolRegistry {
    let authz = authorizer(config);
    match retriever {
        Some(retriever) => standard_registry(config, Arc::new(retriever), authz),
        None => live_registry(config, authz),
    }
}

/// The store opened for writing and migrated, with the embedder it was built with.
pub async fn writable_store(
    config: &Config,
) -> Result<(Arc<dyn ChunkStore>, Arc<dyn Embedder>), StoreError> {
    let store = store::open(&config.store.location).await?;
    store.migrate(config.embedding.dim).await?;
    let embedding = store::embedding_for(store.as_ref(), &config.embedding).await;
    Ok((store, embed::from_config(&embedding)))
}

/// The store as it is: `create` opens (and creates) it for migrating, else it must exist.
pub async fn store(config: &Config, create: bool) -> Result<Arc<dyn ChunkStore>, StoreError> {
    if create {
        store::open(&config.store.location).await
    } else {
        store::open_existing(&config.store.location).await
    }
}
