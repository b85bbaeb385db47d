//! tracecols' compiled reader: the `traceEvents` array of a Kineto trace into Arrow record
//! batches, on threads that run without the GIL. Python (read/native.py) drives it through the
//! bindings in python.rs, reads the events it hands back and reports the errors.

pub mod columns;
pub mod event;
pub mod json;
#[cfg(feature = "python")]
mod python;
pub mod stream;
