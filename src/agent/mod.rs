//! The answering agent. So far its pure parts only, the contracts the tool-calling loop will
//! fill in: how a final answer is classified ([`decision`]), how usage and cost add up over hops
//! ([`usage`]), and the response object of `ask` and `POST /ask` ([`response`]). The loop, the
//! LLM port and the tools arrive with the agent issue.

pub mod decision;
pub mod response;
pub mod usage;
