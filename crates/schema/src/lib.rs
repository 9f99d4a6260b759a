//! The records ifstress writes to disk, their schema version, JSONL reading and writing, and atomic writes.
//!
//! This is the only crate every stage shares; it also holds the one table type ([`table::Table`]) every Markdown, CSV
//! and HTML table is rendered from.
//! It knows nothing about HTTP, models, scoring rules or plotting: it defines what a record looks like on disk and how it gets there safely.

mod atomic;
mod csv_cell;
pub mod env;
pub mod ifscale;
mod io;
pub mod judge;
pub mod judge_check;
mod line_index;
pub mod lock;
pub mod metrics;
pub mod paths;
mod records;
mod responses;
pub mod rift;
pub mod table;

pub use atomic::AtomicJsonl;
pub use csv_cell::csv_cell;
pub use io::{
    Error, JsonlAppender, ReadReport, count_lines, read_jsonl, read_jsonl_chunks, read_jsonl_files,
    read_jsonl_lenient, sha256_file_hex, sha256_hex, write_atomic, write_atomic_with,
    write_jsonl_atomic,
};
pub use line_index::LineIndex;
pub use lock::WriterLock;
pub use records::{
    Attempt, ErrorClass, Logprobs, Message, Outcome, PromptRecord, RequestParams, ResponseRecord,
    ResponseReply, Served, Usage,
};
pub use responses::{ResponseKey, latest_per_key, read_latest_responses};
pub use table::Table;

/// Version of every record layout in this crate; bump it when a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;
