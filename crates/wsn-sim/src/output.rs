//! Results files.
