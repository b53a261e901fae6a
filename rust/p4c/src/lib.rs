//! P4_16 compiler for the v1model architecture (work in progress).
