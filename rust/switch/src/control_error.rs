//! The typed errors of the switch's control API (`control`, `tables`, `pre`): each front end turns
//! them into its own form by kind, never by their text (ctl prints them, P4Runtime maps
//! them to gRPC status codes in one place).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlError {
    /// An entry with the same key (and priority) is in the table already.
    DuplicateEntry {
        table: String,
    },
    /// The key has another number of fields than the table.
    KeyCount {
        table: String,
        expected: usize,
        got: usize,
    },
    /// The table has no key: only its default action can be set.
    Keyless {
        table: String,
    },
    /// An lpm prefix longer than its field.
    PrefixTooLong {
        table: String,
        prefix: u32,
        width: u32,
    },
    /// No entry with this match (key, prefix / masks, priority) in the table.
    NoMatchingEntry {
        table: String,
    },
    /// No entry with this handle in the table.
    NoEntry {
        table: String,
        handle: u32,
    },
    /// No action profile member / group with this handle.
    NoMember {
        handle: u32,
    },
    NoGroup {
        handle: u32,
    },
    /// A cell index past a register's, counter's or meter's end.
    IndexOutOfRange {
        index: usize,
    },
    /// More values than a parser value set holds.
    ValueSetFull {
        name: String,
        max: usize,
    },
    /// The packet replication engine has a multicast group with this id already.
    GroupExists {
        group: u32,
    },
    /// No multicast group with this id.
    NoMulticastGroup {
        group: u32,
    },
    /// No multicast node with this handle.
    NoMulticastNode {
        handle: u32,
    },
    /// The packet replication engine has a clone session with this id already.
    MirrorExists {
        session: u32,
    },
    /// No clone session with this id.
    NoMirror {
        session: u32,
    },
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ControlError as C;
        match self {
            C::DuplicateEntry { table } => write!(f, "table {}: duplicate entry", table),
            C::KeyCount {
                table,
                expected,
                got,
            } => write!(
                f,
                "table {}: expected {} key fields, got {}",
                table, expected, got
            ),
            C::Keyless { table } => write!(f, "table {} has no key; use setdefault", table),
            C::PrefixTooLong {
                table,
                prefix,
                width,
            } => write!(
                f,
                "table {}: prefix length {} > field width {}",
                table, prefix, width
            ),
            C::NoMatchingEntry { table } => write!(f, "table {}: no entry with this match", table),
            C::NoEntry { table, handle } => {
                write!(f, "table {}: no entry with handle {}", table, handle)
            }
            C::NoMember { handle } => write!(f, "no member {}", handle),
            C::NoGroup { handle } => write!(f, "no group {}", handle),
            C::IndexOutOfRange { index } => write!(f, "index {} out of range", index),
            C::ValueSetFull { name, max } => {
                write!(f, "value set {} is full ({} values)", name, max)
            }
            C::GroupExists { group } => write!(f, "multicast group {} already exists", group),
            C::NoMulticastGroup { group } => write!(f, "no multicast group {}", group),
            C::NoMulticastNode { handle } => write!(f, "no multicast node {}", handle),
            C::MirrorExists { session } => write!(f, "clone session {} exists", session),
            C::NoMirror { session } => write!(f, "no clone session {}", session),
        }
    }
}

impl std::error::Error for ControlError {}

/// ctl's commands answer with text: the error's message.
impl From<ControlError> for String {
    fn from(e: ControlError) -> String {
        e.to_string()
    }
}
