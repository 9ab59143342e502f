//! The answering agent. So far: how a final answer is classified ([`decision`]), how usage and
//! cost add up over hops ([`usage`]), the response object of `ask` and `POST /ask`
//! ([`response`]), the tool port with its registry and the first tool ([`tools`]), the LLM port's
//! own types ([`llm`]) and the loop's decisions as a pure step function ([`run`]). Still to come
//! with the agent issue: the OpenAI-compatible adapter and the runner that drives `run`.

pub mod decision;
pub mod llm;
pub mod response;
pub mod run;
pub mod tools;
pub mod usage;
