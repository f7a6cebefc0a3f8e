//! Reading log archives (`.zip`) as GitHub serves them: a run's logs for `flakestat classify`,
//! a run attempt's archive for the survey (crates/flakestat-github). A crate of its own so that
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
}
