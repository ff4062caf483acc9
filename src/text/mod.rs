//! Text for people, below every layer that words a message: sizes, counts, ages and times
//! ([`human`]), and the escaping of characters that could take over a terminal ([`escape`]).
//! Pure functions, no writer: `output` renders with them, jobs word their notes and errors
//! with them.

pub mod escape;
pub mod human;
