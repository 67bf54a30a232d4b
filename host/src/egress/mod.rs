//! What the component reaches outside the process, and how: the one origin
//! it may reach and the connector that reaches it ([`policy`]), and the
//! WebSocket connections it opens through it ([`websocket`], read one frame
//! at a time by [`websocket::frames`]).

pub mod policy;
pub mod websocket;
