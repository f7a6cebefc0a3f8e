//! A downloaded log's bytes, in memory or, past `client::SPOOL_AT`, in an anonymous temporary
//! file, so a large log or archive entry is never held whole; and its time span read at its
//! head and tail only.

use std::io::{Read, Seek, SeekFrom};

use flakestat_core::model::Timestamp;
use flakestat_core::signatures::archive::log_span;
use flakestat_github::{Blob, Response};
use flakestat_store::{CompressedLog, compress_log, compress_log_reader};

/// A downloaded log's bytes: in memory, or spooled to an anonymous temporary file when large
/// (`client::SPOOL_AT`).
pub(super) enum LogBody {
    Memory(Vec<u8>),
    Spooled(std::fs::File, u64),
}

impl LogBody {
    /// Splits a download into its response (status, headers) and its body.
    pub(super) fn of(blob: Blob) -> (Response, LogBody) {
        let Blob {
            mut response,
            spooled,
            ..
        } = blob;
        let body = match spooled {
            Some((file, len)) => LogBody::Spooled(file, len),
            None => LogBody::Memory(std::mem::take(&mut response.body)),
        };
        (response, body)
    }

    /// Reads a whole body: into memory up to `SPOOL_AT`, the rest into an anonymous temporary
    /// file.
    pub(super) fn read(reader: &mut dyn Read) -> std::io::Result<LogBody> {
        let mut head = Vec::new();
        reader.take(super::SPOOL_AT).read_to_end(&mut head)?;
        if (head.len() as u64) < super::SPOOL_AT {
            return Ok(LogBody::Memory(head));
        }
        let mut file = tempfile::tempfile()?;
        std::io::Write::write_all(&mut file, &head)?;
        let rest = std::io::copy(reader, &mut file)?;
        file.rewind()?;
        Ok(LogBody::Spooled(file, head.len() as u64 + rest))
    }

    /// The body from its start, read as it streams.
    pub(super) fn reader(&mut self) -> std::io::Result<Box<dyn Read + '_>> {
        Ok(match self {
            LogBody::Memory(bytes) => Box::new(&bytes[..]),
            LogBody::Spooled(file, _) => {
                file.rewind()?;
                Box::new(&*file)
            }
        })
    }

    /// The body compressed as the store keeps a log; a spooled one read as it streams.
    pub(super) fn compress(&mut self) -> std::io::Result<CompressedLog> {
        Ok(match self {
            LogBody::Memory(bytes) => compress_log(bytes),
            LogBody::Spooled(file, _) => {
                file.rewind()?;
                compress_log_reader(&*file)?
            }
        })
    }

    pub(super) fn len(&self) -> u64 {
        match self {
            LogBody::Memory(bytes) => bytes.len() as u64,
            LogBody::Spooled(_, len) => *len,
        }
    }

    /// `log_span` of the body; a spooled one is read only at its head and tail.
    pub(super) fn span(&mut self) -> std::io::Result<Option<(Timestamp, Timestamp)>> {
        const EDGE: u64 = 1 << 20;
        let (file, len) = match self {
            LogBody::Memory(bytes) => return Ok(log_span(bytes)),
            LogBody::Spooled(file, len) => (file, *len),
        };
        let mut head = Vec::new();
        file.seek(SeekFrom::Start(0))?;
        (&mut *file).take(EDGE).read_to_end(&mut head)?;
        let tail_start = len.saturating_sub(EDGE);
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(tail_start))?;
        file.read_to_end(&mut tail)?;
        file.seek(SeekFrom::Start(0))?;
        // The tail's first line may start mid-line: skip it unless the tail is the whole log.
        if tail_start > 0 {
            let cut = memchr::memchr(b'\n', &tail).map_or(tail.len(), |i| i + 1);
            tail.drain(..cut);
        }
        Ok(match (log_span(&head), log_span(&tail)) {
            (Some((first, _)), Some((_, last))) => Some((first, last)),
            (Some(span), None) => Some(span),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spooled log (past `SPOOL_AT`) streams back whole from its start, however far it was
    /// read before, and compresses as the same log in memory does.
    #[test]
    fn a_spooled_log_streams_back_whole() {
        let line = b"2026-07-12T17:22:03.2167544Z   TRY 1 FAIL [   0.005s] t::basic flaky\n";
        let log: Vec<u8> = line
            .iter()
            .copied()
            .cycle()
            .take(super::super::SPOOL_AT as usize + line.len() * 3)
            .collect();
        let mut spooled = LogBody::read(&mut &log[..]).unwrap();
        assert!(matches!(spooled, LogBody::Spooled(..)));
        spooled.span().unwrap();
        let mut back = Vec::new();
        spooled.reader().unwrap().read_to_end(&mut back).unwrap();
        assert!(back == log, "the spooled log read back differs");
        let mut memory = LogBody::Memory(log.clone());
        let (a, b) = (spooled.compress().unwrap(), memory.compress().unwrap());
        assert_eq!(a.raw_size(), b.raw_size());
    }
}
