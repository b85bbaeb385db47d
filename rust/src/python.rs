//! The Python bindings: `tracecols._native.EventReader`, batches handed to pyarrow through the
//! Arrow C data interface (PyCapsules).

use std::sync::Arc;

use arrow_array::{Array, StructArray};
use arrow_schema::{Field, Fields};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};
use std::sync::mpsc::Receiver;
use std::sync::Mutex;

use crate::event::Promoted;
use crate::json::Limits;
use crate::stream::{self, Options, ReadError, Reader};

create_exception!(_native, ReadFailed, PyException, "The native reader stopped: (kind, byte offset, message).");

fn failed(e: ReadError) -> PyErr {
    let (kind, at, msg) = match e {
        ReadError::Syntax(at, m) => ("syntax", at, m),
        ReadError::Bound(at, m) => ("bound", at, m),
        ReadError::Io(at, m) => ("io", at, m),
        ReadError::Again(n) => ("again", n, "more traceEvents arrays".into()),
    };
    ReadFailed::new_err((kind, at, msg))
}

/// The events of one trace file, a record batch at a time.
#[pyclass(module = "tracecols._native")]
struct EventReader {
    inner: Mutex<Reader>,
    /// where `feed` sends bytes, for a reader made without a path
    feeder: Mutex<Option<stream::Feeder>>,
    /// the buffers the reader has read, for `feed` to fill again
    returned: Mutex<Option<Receiver<Vec<u8>>>>,
}

#[pymethods]
impl EventReader {
    /// `promoted`: (arg key, column, kind) of every promoted column, as read/schema.py lists them.
    /// With `path`, the reader reads that (uncompressed) file; without, the bytes handed over
    /// with `feed` (decompressed, from the document's start).
    #[new]
    #[pyo3(signature = (promoted, *, path=None, array=false, threads=1, piece=4 << 20, max_event=64 << 20, max_tail=64 << 20, max_depth=900, max_digits=4300, skip=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        promoted: Vec<(String, String, String)>,
        path: Option<String>,
        array: bool,
        threads: usize,
        piece: usize,
        max_event: usize,
        max_tail: usize,
        max_depth: usize,
        max_digits: usize,
        skip: usize,
    ) -> PyResult<Self> {
        let p = Promoted::new(&promoted).map_err(pyo3::exceptions::PyValueError::new_err)?;
        let opts = Options {
            threads: threads.max(1),
            piece: piece.max(16),
            max_event,
            max_tail,
            limits: Limits { depth: max_depth, digits: max_digits },
            array,
            skip,
        };
        let (reader, feeder, returned) = match path {
            Some(path) => (py.detach(|| Reader::start(&path, p, opts)).map_err(failed)?, None, None),
            None => {
                let (src, tx, returned) = stream::Fed::new();
                (Reader::from_bytes(Box::new(src), p, opts), Some(tx), Some(returned))
            }
        };
        Ok(EventReader { inner: Mutex::new(reader), feeder: Mutex::new(feeder), returned: Mutex::new(returned) })
    }

    /// Hand over the next bytes (b"" at the end); waits, without the GIL, while the reader is
    /// `threads + 2` pieces ahead. False once the reader has stopped (it takes no more).
    fn feed(&self, py: Python<'_>, data: &[u8]) -> bool {
        // a buffer the reader is done with, if one has come back: its pages are there already
        let mut buf = self.returned.lock().ok().and_then(|r| r.as_ref()?.try_recv().ok()).unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        let data = buf;
        let end = data.is_empty();
        let mut guard = match self.feeder.lock() {
            Ok(g) => g,
            Err(_) => return false,
        };
        let sent = match guard.as_ref() {
            Some(tx) => py.detach(|| tx.send(Ok(data)).is_ok()),
            None => false,
        };
        if end || !sent {
            *guard = None;
        }
        sent
    }

    /// Stop the bytes with an error (the caller's inflater failed): the read fails with it.
    fn fail(&self, py: Python<'_>, message: String) {
        if let Ok(mut guard) = self.feeder.lock() {
            if let Some(tx) = guard.take() {
                py.detach(|| {
                    let _ = tx.send(Err(message));
                });
            }
        }
    }

    /// The next batch: (schema capsule, array capsule, [(uid, event bytes) for the Python reader],
    /// bytes read so far), or None at the end.
    #[allow(clippy::type_complexity)]
    fn next_batch<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>, Vec<(i64, Bound<'py, PyBytes>)>, u64)>> {
        let out = py.detach(|| {
            let mut r = self.inner.lock().map_err(|_| ReadError::Io(0, "the reader failed before".into()))?;
            r.next_batch()
        });
        let out = match out.map_err(failed)? {
            Some(o) => o,
            None => return Ok(None),
        };
        let (names, arrays): (Vec<_>, Vec<_>) = out.columns.into_iter().unzip();
        let fields: Fields =
            names.iter().zip(&arrays).map(|(n, a)| Arc::new(Field::new(n, a.data_type().clone(), true))).collect();
        let st = StructArray::new(fields, arrays, None);
        let (array, schema) = arrow_array::ffi::to_ffi(&st.to_data())
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        let schema = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        let odd = out.odd.into_iter().map(|(uid, b)| (uid, PyBytes::new(py, &b))).collect();
        Ok(Some((schema, array, odd, out.read)))
    }

    /// Stop reading (the threads end; `feed` returns False from then on) and wait for the threads.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            if let Ok(mut r) = self.inner.lock() {
                r.close(true);
            }
        });
    }

    /// The number of events read so far.
    fn events(&self) -> i64 {
        self.inner.lock().map(|r| r.events()).unwrap_or(0)
    }

    /// The bytes after the events array (whitespace outside strings left out), once it is read.
    fn tail<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        let r = self.inner.lock().ok()?;
        r.tail().map(|t| PyBytes::new(py, t))
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EventReader>()?;
    m.add("ReadFailed", m.py().get_type::<ReadFailed>())?;
    Ok(())
}
