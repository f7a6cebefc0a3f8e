//! Reading log archives (`.zip`) as GitHub serves them: a run's logs for `flakestat classify`,
//! a run attempt's archive for the survey (crates/flakestat-sync). A crate of its own so that
//! flakestat-core, which knows what the entries mean (`signatures::archive`: entry names, a
//! log's time span), builds without zip; both callers reach it from where they are.

use std::io::{Read, Seek};

/// A zip archive that cannot be read at all.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ArchiveError(String);

/// Calls `each` with every file entry of a zip archive, in archive order: its path in the
/// archive and a reader of its bytes, or why the entry cannot be read. Folders are skipped.
/// Returns how many file entries there were; `Err` when the archive itself is unreadable.
pub fn visit_files<R: Read + Seek>(
    reader: R,
    mut each: impl FnMut(Result<(&str, &mut dyn Read), String>),
) -> Result<usize, ArchiveError> {
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| ArchiveError(e.to_string()))?;
    let mut files = 0;
    for i in 0..archive.len() {
        match archive.by_index(i) {
            Ok(mut entry) => {
                if entry.is_dir() {
                    continue;
                }
                files += 1;
                let name = entry.name().to_string();
                each(Ok((&name, &mut entry)));
            }
            Err(e) => {
                files += 1;
                each(Err(e.to_string()));
            }
        }
    }
    Ok(files)
}

/// What an archive from an untrusted producer may hold before it is refused (a zip bomb: a
/// small download that inflates to gigabytes, or a million entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Most file entries.
    pub max_entries: usize,
    /// Most bytes inflated over all entries, counted as they are read (declared sizes can lie).
    pub max_total: u64,
    /// Most inflated bytes per compressed byte of an entry.
    pub max_ratio: u64,
}

/// Like [`visit_files`], for archives nobody vouches for: refused (`Err`, naming the cap) when
/// it has more entries than `caps.max_entries`, when an entry declares or inflates to more
/// than `caps.max_ratio` times its compressed size, or when the entries read inflate to more
/// than `caps.max_total` bytes. `wanted` picks the entries read by name; the others are
/// skipped unread. What `each` got before a refusal is the caller's to discard.
pub fn visit_files_within<R: Read + Seek>(
    reader: R,
    caps: Caps,
    wanted: impl Fn(&str) -> bool,
    mut each: impl FnMut(&str, &mut dyn Read),
) -> Result<usize, ArchiveError> {
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| ArchiveError(e.to_string()))?;
    if archive.len() > caps.max_entries {
        return Err(ArchiveError(format!(
            "{} entries, over the cap of {}",
            archive.len(),
            caps.max_entries
        )));
    }
    let mut total = 0u64;
    let mut files = 0;
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| ArchiveError(format!("entry {i}: {e}")))?;
        if entry.is_dir() {
            continue;
        }
        files += 1;
        let name = entry.name().to_string();
        if !wanted(&name) {
            continue;
        }
        let packed = entry.compressed_size().max(1);
        let ratio_cap = packed.saturating_mul(caps.max_ratio);
        if entry.size() > ratio_cap {
            return Err(ArchiveError(format!(
                "entry {name:?} inflates {packed} bytes to {}, over the ratio cap of {}",
                entry.size(),
                caps.max_ratio
            )));
        }
        let room = caps.max_total.saturating_sub(total).min(ratio_cap);
        let mut limited = Limited {
            inner: &mut entry,
            left: room,
            over: false,
        };
        each(&name, &mut limited);
        if limited.over {
            return Err(ArchiveError(if room == ratio_cap {
                format!(
                    "entry {name:?} inflates past {} times its {packed} compressed bytes",
                    caps.max_ratio
                )
            } else {
                format!("entries inflate past the cap of {} bytes", caps.max_total)
            }));
        }
        total += room - limited.left;
    }
    Ok(files)
}

/// A reader that fails (and says so in `over`) once more than `left` bytes were asked of it.
struct Limited<'a> {
    inner: &'a mut dyn Read,
    left: u64,
    over: bool,
}

impl Read for Limited<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.over {
            return Err(std::io::Error::other("over the archive's caps"));
        }
        // One byte more than allowed tells "exactly at the cap" from "past it".
        let want = buf.len().min(self.left.saturating_add(1) as usize);
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > self.left {
            self.over = true;
            return Err(std::io::Error::other("over the archive's caps"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use super::*;

    #[test]
    fn file_entries_are_visited_in_order_and_folders_skipped() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("1_build.txt", options).unwrap();
        zip.write_all(b"first").unwrap();
        zip.add_directory("build/", options).unwrap();
        zip.start_file("build/1_Run tests.txt", options).unwrap();
        zip.write_all(b"second").unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        let mut seen = Vec::new();
        let files = visit_files(Cursor::new(bytes), |entry| {
            let (name, reader) = entry.unwrap();
            let mut text = String::new();
            reader.read_to_string(&mut text).unwrap();
            seen.push(format!("{name}={text}"));
        })
        .unwrap();
        assert_eq!(files, 2);
        assert_eq!(seen, ["1_build.txt=first", "build/1_Run tests.txt=second"]);
    }

    #[test]
    fn bytes_that_are_not_a_zip_are_an_error() {
        assert!(visit_files(Cursor::new(b"not a zip".to_vec()), |_| {}).is_err());
    }

    const CAPS: Caps = Caps {
        max_entries: 3,
        max_total: 1 << 20,
        max_ratio: 50,
    };

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in entries {
            zip.start_file(*name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    fn read_all(bytes: Vec<u8>, caps: Caps) -> Result<Vec<String>, ArchiveError> {
        let mut seen = Vec::new();
        visit_files_within(
            Cursor::new(bytes),
            caps,
            |n| n.ends_with(".xml"),
            |name, r| {
                let mut text = String::new();
                if r.read_to_string(&mut text).is_ok() {
                    seen.push(format!("{name}={text}"));
                }
            },
        )?;
        Ok(seen)
    }

    #[test]
    fn an_archive_within_the_caps_is_read_and_unwanted_entries_skipped() {
        let bytes = zip_of(&[("a.xml", b"<testsuite/>"), ("b.txt", b"not read")]);
        assert_eq!(read_all(bytes, CAPS).unwrap(), ["a.xml=<testsuite/>"]);
    }

    /// A zip bomb (one entry of zeros deflated a thousandfold), too many entries, and entries
    /// that inflate past the total: each refused with the cap named.
    #[test]
    fn bombs_and_crowds_are_refused_naming_the_cap() {
        let zeros = vec![0u8; 4 << 20];
        let err = read_all(zip_of(&[("bomb.xml", &zeros)]), CAPS).unwrap_err();
        assert!(err.to_string().contains("ratio cap of 50"), "{err}");
        let many: Vec<(String, Vec<u8>)> =
            (0..4).map(|i| (format!("{i}.xml"), vec![b'x'])).collect();
        let refs: Vec<(&str, &[u8])> = many.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
        let err = read_all(zip_of(&refs), CAPS).unwrap_err();
        assert!(
            err.to_string().contains("4 entries, over the cap of 3"),
            "{err}"
        );
        let text: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let small = Caps {
            max_total: 1_000_000,
            max_ratio: 1_000,
            ..CAPS
        };
        let err = read_all(
            zip_of(&[("a.xml", &text[..600_000]), ("b.xml", &text[600_000..])]),
            small,
        )
        .unwrap_err();
        assert!(err.to_string().contains("cap of 1000000 bytes"), "{err}");
    }
}
