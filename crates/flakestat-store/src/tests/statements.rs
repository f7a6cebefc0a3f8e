//! Every statement the store's operations write is prepared on both engines: SQLite and, when
//! `FLAKESTAT_TEST_POSTGRES` names a server, PostgreSQL (through `postgres_sql`, as the store
//! sends it). Preparing checks a statement's syntax and every table and column it names, so a
//! statement only one engine reads fails here, even one no other test happens to run.
//!
//! The statements are read from the sources: each string literal that begins with a statement's
//! keyword. A statement built with `format!` has its placeholders filled as the code fills them
//! (`FILLED`); a placeholder not listed there fails the test, so a new one is not skipped.

use super::engines;
use crate::db::Dialect;

/// The sources that hold the store's operations, written once for both engines.
const SOURCES: &[(&str, &str)] = &[
    ("lib.rs", include_str!("../lib.rs")),
    ("ancestry.rs", include_str!("../ancestry.rs")),
    ("artifacts.rs", include_str!("../artifacts.rs")),
    ("claims.rs", include_str!("../claims.rs")),
    ("engine.rs", include_str!("../engine.rs")),
    ("green.rs", include_str!("../green.rs")),
    ("handle.rs", include_str!("../handle.rs")),
    ("hidden.rs", include_str!("../hidden.rs")),
    ("owners.rs", include_str!("../owners.rs")),
    ("placements.rs", include_str!("../placements.rs")),
    ("plans.rs", include_str!("../plans.rs")),
    ("queue.rs", include_str!("../queue.rs")),
    ("reclassify.rs", include_str!("../reclassify.rs")),
];

/// The sources left out, and why: each engine's own statements, and the migrations (whose
/// tables `both_engines_migrate_to_the_same_tables_and_columns` compares).
const LEFT_OUT: &[&str] = &["db.rs", "schema.rs", "tests.rs"];

/// Statements of the sources that only SQLite's own connection runs (not through the seam),
/// and why: they are prepared on SQLite alone.
const SQLITE_ONLY: &[&str] = &[
    // `SqliteStore::open_read_only`'s probe that WAL's shared memory can be made.
    "SELECT count(*) FROM sqlite_master",
];

/// The keywords a statement begins with.
const KEYWORDS: &[&str] = &["SELECT ", "INSERT ", "UPDATE ", "DELETE ", "WITH "];

/// A `format!` placeholder of a statement, and what fills it on `dialect`.
fn filled(placeholder: &str, dialect: Dialect) -> Option<String> {
    Some(match placeholder {
        "{ids}" => "1, 2".to_string(),
        "{bytewise}" => dialect.bytewise().to_string(),
        // `load_mainline`'s one placeholder.
        "{}" => dialect.stored_order().to_string(),
        "{RUN_LISTINGS}" => crate::RUN_LISTINGS.to_string(),
        _ => return None,
    })
}

/// The statements of `source`: string literals (with `\"` inside) that begin with a keyword,
/// each with whether it is `format!`'s (its braces are placeholders).
fn statements(source: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find('"') {
        let body = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let literal = &body[..end];
        if KEYWORDS.iter().any(|k| literal.starts_with(k)) {
            let formatted = rest[..start].trim_end().ends_with("format!(");
            out.push((literal.replace("\\\"", "\""), formatted));
        }
        rest = &body[end + 1..];
    }
    out
}

/// `format!`'s `sql` with its placeholders filled for `dialect` (and `{{` read as `{`), or
/// the first placeholder not known.
fn fill(sql: &str, dialect: Dialect) -> Result<String, String> {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(open) = rest.find('{') {
        if rest[open..].starts_with("{{") {
            out.push_str(&rest[..=open]);
            rest = &rest[open + 2..];
            continue;
        }
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| format!("an unclosed {{ in {sql:?}"))?;
        let placeholder = &rest[open..=close];
        out.push_str(&rest[..open]);
        out.push_str(&filled(placeholder, dialect).ok_or_else(|| placeholder.to_string())?);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[test]
fn every_source_of_the_store_is_read_or_left_out_on_purpose() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") {
            assert!(
                SOURCES.iter().any(|(n, _)| *n == name) || LEFT_OUT.contains(&name.as_str()),
                "src/{name}: add it to SOURCES (or LEFT_OUT, saying why)"
            );
        }
    }
}

#[test]
fn every_statement_of_the_store_prepares_on_both_engines() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (engine, _dir, store) in engines() {
        let db = store.db();
        for (file, source) in SOURCES {
            for (sql, formatted) in statements(source) {
                if db.dialect() != Dialect::Sqlite && SQLITE_ONLY.contains(&sql.as_str()) {
                    checked += 1;
                    continue;
                }
                let sql = if formatted {
                    fill(&sql, db.dialect())
                } else {
                    // `per_job`'s templates: it writes the ids in.
                    Ok(sql.replace("{ids}", "1, 2"))
                };
                match sql {
                    Ok(sql) => {
                        if let Err(e) = db.prepare_only(&sql) {
                            failures.push(format!("{engine}, {file}: {e}\n{sql}"));
                        }
                        checked += 1;
                    }
                    Err(placeholder) => failures.push(format!(
                        "{file}: the placeholder {placeholder} is not in `filled`"
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The sources hold over eighty statements: the reading found them, on each engine.
    let found: usize = SOURCES.iter().map(|(_, s)| statements(s).len()).sum();
    assert!(found > 80, "only {found} statements found");
    assert_eq!(checked, found * engines().len());
}

#[test]
fn a_statement_one_engine_cannot_read_fails_the_check() {
    for (engine, _dir, store) in engines() {
        let db = store.db();
        db.prepare_only("SELECT id FROM runs").unwrap();
        assert!(
            db.prepare_only("SELECT no_such_column FROM runs").is_err(),
            "{engine}"
        );
    }
    // SQLite's spelling of the order first stored is not PostgreSQL's.
    let pg = engines()
        .into_iter()
        .find(|(engine, _, _)| *engine == "postgres");
    if let Some((_, _, store)) = pg {
        assert!(
            store
                .db()
                .prepare_only("SELECT sha FROM mainline ORDER BY rowid")
                .is_err()
        );
    }
}
