//! The answering agent. So far: how a final answer is classified ([`decision`]), how usage and
//! cost add up over hops ([`usage`]), the response object of `ask` and `POST /ask`
//! ([`response`]), and the tool port with its registry and the first tool ([`tools`]). The LLM
//! port and the loop arrive with the agent issue.

pub mod decision;
pub mod response;
pub mod tools;
pub mod usage;
