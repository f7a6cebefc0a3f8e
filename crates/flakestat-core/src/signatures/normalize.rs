//! Normalizing GitHub Actions raw job logs, one line at a time: what a signature's pattern sees.
//!
//! A raw log line is `BOM? TIMESTAMP SPACE message CR? LF`, where the timestamp looks like
//! `2026-07-15T21:26:03.1234567Z`, continuation lines of a multi-line message carry no timestamp,
//! a UTF-8 BOM may appear anywhere (GitHub concatenates step logs), ANSI escape sequences appear
//! anywhere, and bytes may be invalid UTF-8. Normalizing drops the BOMs, the timestamp, the ANSI
//! and other terminal escape sequences, C1 control characters and the trailing CR, and decodes
//! the rest lossily. Logs in any other format (plain text, stdin) simply have no timestamps.
//!
//! The matcher's fast path only calls [`normalize_line`] for lines that need it ([`needs_cleaning`]);
//! for the others the normalized text is a sub-slice of the raw line ([`strip_prefix`]).

use std::borrow::Cow;

const BOM: &[u8] = "\u{feff}".as_bytes();
const ESC: u8 = 0x1b;

/// The bytes that may begin something normalization removes: ESC (an escape sequence), 0xEF (a
/// BOM), 0xC2 (a C1 control). The matcher looks for the same bytes to find the lines it must
/// normalize.
pub(super) const LEADS: [u8; 3] = [ESC, 0xef, 0xc2];

/// Where the next of [`LEADS`] lies in `s`.
fn next_lead(s: &[u8]) -> Option<usize> {
    memchr::memchr3(LEADS[0], LEADS[1], LEADS[2], s)
}

/// Length of the GitHub timestamp prefix at the start of `line` (including the space after it),
/// or 0. Accepts `YYYY-MM-DDTHH:MM:SS` with an optional fraction of 1 to 9 digits, then `Z `.
pub fn timestamp_len(line: &[u8]) -> usize {
    const SHAPE: &[u8; 19] = b"0000-00-00T00:00:00";
    if line.len() < 21 {
        return 0;
    }
    for (i, &want) in SHAPE.iter().enumerate() {
        let got = line[i];
        let ok = if want == b'0' {
            got.is_ascii_digit()
        } else {
            got == want
        };
        if !ok {
            return 0;
        }
    }
    let mut i = 19;
    if line[i] == b'.' {
        let digits = line[i + 1..]
            .iter()
            .take(10)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || digits > 9 {
            return 0;
        }
        i += 1 + digits;
    }
    if line.len() >= i + 2 && line[i] == b'Z' && line[i + 1] == b' ' {
        i + 2
    } else if line.len() == i + 1 && line[i] == b'Z' {
        // A timestamp followed by an empty message and no space.
        i + 1
    } else {
        0
    }
}

/// The line without its trailing CR and leading timestamp, for a line that needs no cleaning.
/// `line` excludes the LF.
pub fn strip_prefix(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    &line[timestamp_len(line)..]
}

/// Whether `line` holds anything [`strip_prefix`] would leave in: an escape sequence, a BOM, a C1
/// control character, or invalid UTF-8.
pub fn needs_cleaning(line: &[u8]) -> bool {
    plain_text(line, true).is_none()
}

/// The normalized text of a line that needs no cleaning but [`strip_prefix`]'s (see
/// [`needs_cleaning`]), validated once; `None` when it needs more. `leads`: whether the line
/// may hold one of [`LEADS`] (`false` when a scan of the text already found none there: only
/// its UTF-8 is checked then).
pub fn plain_text(line: &[u8], leads: bool) -> Option<&str> {
    if leads {
        let mut rest = line;
        while let Some(i) = next_lead(rest) {
            match rest[i] {
                ESC => return None,
                0xef if rest[i..].starts_with(BOM) => return None,
                0xc2 if rest.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) => {
                    return None;
                }
                _ => {}
            }
            rest = &rest[i + 1..];
        }
    }
    // `strip_prefix` cuts ASCII only (a timestamp, a CR): the line is valid UTF-8 exactly when
    // what it leaves is. It holds no BOM: refused above, or, with `leads` false, no 0xEF byte at
    // all (the caller's scan found none). simdutf8's check: a long line's is most of the
    // bytes a log's scan checks, and std's takes twice as long.
    simdutf8::basic::from_utf8(strip_prefix(line)).ok()
}

/// The normalized text of one raw line (without its LF): BOMs, the timestamp, escape sequences,
/// C1 controls and a trailing CR removed, invalid UTF-8 replaced by U+FFFD.
pub fn normalize_line(line: &[u8]) -> Cow<'_, str> {
    if let Some(text) = plain_text(line, true) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(line.len());
    normalize_into(line, &mut out);
    Cow::Owned(out)
}

/// Like [`normalize_line`], into a reused buffer (cleared first).
pub fn normalize_into(line: &[u8], out: &mut String) {
    out.clear();
    let mut line = line.strip_suffix(b"\r").unwrap_or(line);
    while let Some(rest) = line.strip_prefix(BOM) {
        line = rest;
    }
    line = &line[timestamp_len(line)..];
    // Kept bytes are copied in runs (up to the next byte that may begin something removed)
    // into `out`'s own buffer, so a caller reusing `out` allocates nothing per line; invalid
    // UTF-8 is decoded lossily at the end.
    let mut bytes = std::mem::take(out).into_bytes();
    bytes.reserve(line.len());
    let mut i = 0;
    while i < line.len() {
        let next = next_lead(&line[i..]).map_or(line.len(), |k| i + k);
        bytes.extend_from_slice(&line[i..next]);
        i = next;
        let Some(&b) = line.get(i) else { break };
        if b == ESC {
            i += escape_len(&line[i..]);
        } else if line[i..].starts_with(BOM) {
            i += BOM.len();
        } else if b == 0xc2 && line.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) {
            // C1 control (U+0080..U+009F); U+009B is a CSI introducer.
            if line[i + 1] == 0x9b {
                i += 2 + csi_tail_len(&line[i + 2..]);
            } else {
                i += 2;
            }
        } else {
            bytes.push(b);
            i += 1;
        }
    }
    *out = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
}

/// Length of the escape sequence starting with ESC at `s[0]`: CSI (`ESC [ params final`), OSC
/// (`ESC ] … BEL` or `ESC ] … ESC \`), or a two-byte escape. A lone ESC at the end is one byte.
fn escape_len(s: &[u8]) -> usize {
    match s.get(1) {
        None => 1,
        Some(b'[') => 2 + csi_tail_len(&s[2..]),
        Some(b']') => {
            let mut i = 2;
            while i < s.len() {
                if s[i] == 0x07 {
                    return i + 1;
                }
                if s[i] == ESC && s.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            s.len()
        }
        Some(&b) if (0x40..=0x5f).contains(&b) => 2,
        Some(&b) if (0x20..=0x2f).contains(&b) => {
            // nF escape: intermediates, then one final byte (`ESC ( B`).
            let mut i = 1;
            while i < s.len() && (0x20..=0x2f).contains(&s[i]) {
                i += 1;
            }
            (i + 1).min(s.len())
        }
        Some(_) => 1,
    }
}

/// Length of a CSI sequence after its introducer: parameter bytes `0-?`, intermediate bytes
/// ` -/`, one final byte `@-~`. An unterminated sequence stops at the first other byte.
fn csi_tail_len(s: &[u8]) -> usize {
    let mut i = 0;
    while i < s.len() && (0x30..=0x3f).contains(&s[i]) {
        i += 1;
    }
    while i < s.len() && (0x20..=0x2f).contains(&s[i]) {
        i += 1;
    }
    if i < s.len() && (0x40..=0x7e).contains(&s[i]) {
        i + 1
    } else {
        i
    }
}

/// The step a `##[group]` line opens, if `text` (normalized) is one.
pub fn group_title(text: &str) -> Option<&str> {
    text.strip_prefix("##[group]")
}

/// Whether `text` (normalized) is the `##[error]Process completed with exit code N.` line that
/// ends every failed step: boilerplate that must never tell one failure from another.
pub fn is_exit_code_boilerplate(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("##[error]Process completed with exit code ") else {
        return false;
    };
    let rest = rest.strip_suffix('.').unwrap_or(rest);
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a sample of a file (its first block) looks binary: more than 1 NUL byte per 100 bytes.
/// Text logs have none; UTF-16 text has one every other byte.
pub fn looks_binary(sample: &[u8]) -> bool {
    let nuls = memchr::memchr_iter(0, sample).count();
    nuls > 0 && nuls * 100 >= sample.len()
}

/// The byte order a UTF-16 byte-order mark at the start of `sample` announces: `Some(true)` for
/// big-endian (`FE FF`), `Some(false)` for little-endian (`FF FE`, what PowerShell's
/// `Out-File`/`>` writes), `None` for anything else.
pub fn utf16_bom(sample: &[u8]) -> Option<bool> {
    match sample {
        [0xfe, 0xff, ..] => Some(true),
        [0xff, 0xfe, ..] => Some(false),
        _ => None,
    }
}

/// The byte order of UTF-16 text that has no byte-order mark (PowerShell's `Out-File -Encoding
/// unicode` of a console whose output was re-encoded, a file cut from a larger one): `Some(true)`
/// for big-endian, `Some(false)` for little-endian, `None` when `sample` does not look like
/// UTF-16. A log is mostly ASCII, so one byte of nearly every code unit is NUL and the other is
/// not: at least 90 % of the first 4 KiB's units are printable ASCII or a line end with their
/// high byte NUL (at least 16 units), and no unit is NUL itself. Text in any 8-bit encoding has
/// no NUL bytes at all, so it never qualifies.
pub fn utf16_without_bom(sample: &[u8]) -> Option<bool> {
    let sample = &sample[..sample.len().min(4096) & !1];
    let units = sample.len() / 2;
    if units < 16 {
        return None;
    }
    let ascii = |b: u8| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b);
    let (mut le, mut be) = (0, 0);
    for pair in sample.chunks_exact(2) {
        match (pair[0], pair[1]) {
            (0, 0) => return None,
            (lo, 0) if ascii(lo) => le += 1,
            (0, lo) if ascii(lo) => be += 1,
            _ => {}
        }
    }
    if le * 10 >= units * 9 {
        Some(false)
    } else if be * 10 >= units * 9 {
        Some(true)
    } else {
        None
    }
}

/// The upper halves (bytes 0x80 to 0xFF) of the OEM code pages a Windows console decodes a
/// program's output with by default: 437 (US) and 850 (Western Europe).
const OEM_PAGES: [&str; 2] = [
    "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}",
    "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒáíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐└┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈıÍÎÏ┘┌█▄¦Ì▀ÓßÔÒõÕµþÞÚÛÙýÝ¯´\u{ad}±‗¾¶§÷¸°¨·¹³²■\u{a0}",
];

/// Each OEM page's characters with their bytes.
static OEM_BYTES: std::sync::LazyLock<[std::collections::HashMap<char, u8>; 2]> =
    std::sync::LazyLock::new(|| {
        OEM_PAGES.map(|page| {
            page.chars()
                .zip(0x80u8..=0xff)
                .collect::<std::collections::HashMap<char, u8>>()
        })
    });

/// The character three OEM-page characters from `chars` stand for when they are one 3-byte
/// UTF-8 sequence a console decoded byte by byte (`ΓùÅ` is `●`, `ΓÇ║` is `›`, `∩╗┐` the BOM).
fn oem_triple(chars: &[char]) -> Option<char> {
    let [a, b, c, ..] = chars else { return None };
    OEM_BYTES.iter().find_map(|page| {
        let bytes = [*page.get(a)?, *page.get(b)?, *page.get(c)?];
        let lead_and_continuations = (0xe0..=0xef).contains(&bytes[0])
            && bytes[1..].iter().all(|b| (0x80..=0xbf).contains(b));
        lead_and_continuations
            .then(|| std::str::from_utf8(&bytes).ok()?.chars().next())
            .flatten()
    })
}

/// Whether `c` is the first byte of a 3-byte UTF-8 sequence on some OEM page.
fn oem_lead(c: char) -> bool {
    OEM_BYTES
        .iter()
        .any(|page| page.get(&c).is_some_and(|b| (0xe0..=0xef).contains(b)))
}

/// Undoes a Windows console's mojibake in text PowerShell saved: a program wrote UTF-8, the
/// console decoded it with its OEM code page (437 or 850), and PowerShell saved that as UTF-16.
/// Only 3-byte sequences are mended (`ΓùÅ` → `●`, `ΓÇ║` → `›`, `∩╗┐` → the BOM): a Greek or
/// accented lead character followed by two of the page's upper-half characters that form valid
/// UTF-8. Two-byte sequences are left alone: `═╗`, common in box drawing, is valid UTF-8 too.
pub fn mend_console_mojibake(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut mended = false;
    while i < chars.len() {
        if !chars[i].is_ascii()
            && let Some(c) = oem_triple(&chars[i..])
        {
            out.push(c);
            i += 3;
            mended = true;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    if mended {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Decodes a UTF-16 stream (after its BOM) into UTF-8 as it is read; unpaired surrogates and a
/// trailing odd byte become U+FFFD, and a Windows console's mojibake is mended
/// ([`mend_console_mojibake`]: UTF-16 is what PowerShell saves a console's output as). Memory
/// stays bounded whatever the stream's size.
pub struct Utf16Reader<R> {
    inner: R,
    big_endian: bool,
    /// Decoded bytes not yet handed out, from `pos`.
    out: Vec<u8>,
    pos: usize,
    /// Raw bytes read but not yet decoded (an odd byte, a high surrogate awaiting its pair).
    carry: Vec<u8>,
    /// Decoded characters held back: they may begin a mojibake sequence the next read ends.
    pending: String,
    started: bool,
    done: bool,
}

impl<R: std::io::Read> Utf16Reader<R> {
    pub fn new(inner: R, big_endian: bool) -> Utf16Reader<R> {
        Utf16Reader {
            inner,
            big_endian,
            out: Vec::new(),
            pos: 0,
            carry: Vec::new(),
            pending: String::new(),
            started: false,
            done: false,
        }
    }

    fn refill(&mut self) -> std::io::Result<()> {
        let mut raw = std::mem::take(&mut self.carry);
        let had = raw.len();
        raw.resize(had + (64 << 10), 0);
        let n = loop {
            match self.inner.read(&mut raw[had..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        raw.truncate(had + n);
        if n == 0 {
            self.done = true;
        }
        let mut units: Vec<u16> = raw
            .chunks_exact(2)
            .map(|p| {
                if self.big_endian {
                    u16::from_be_bytes([p[0], p[1]])
                } else {
                    u16::from_le_bytes([p[0], p[1]])
                }
            })
            .collect();
        let odd = raw.len() % 2 == 1;
        if !self.done {
            // Keep a trailing odd byte and a trailing high surrogate for the next read.
            let mut keep = if odd { 1 } else { 0 };
            if units.last().is_some_and(|u| (0xd800..0xdc00).contains(u)) {
                units.pop();
                keep += 2;
            }
            self.carry = raw[raw.len() - keep..].to_vec();
        }
        if !self.started {
            self.started = true;
            if units.first() == Some(&0xfeff) {
                units.remove(0);
            }
        }
        self.out.clear();
        self.pos = 0;
        let mut text = std::mem::take(&mut self.pending);
        text.extend(char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)));
        if self.done && odd {
            text.push(char::REPLACEMENT_CHARACTER);
        }
        if !self.done {
            // Hold back a possible start of a mojibake sequence (its lead, or its lead and a
            // second character) for the next read to complete.
            let tail: Vec<(usize, char)> = text.char_indices().rev().take(2).collect();
            let hold = match tail.as_slice() {
                [(i, last), ..] if oem_lead(*last) => Some(*i),
                [_, (i, second)] if oem_lead(*second) => Some(*i),
                _ => None,
            };
            if let Some(at) = hold {
                self.pending = text.split_off(at);
            }
        }
        self.out = match mend_console_mojibake(&text) {
            Cow::Borrowed(_) => text.into_bytes(),
            Cow::Owned(mended) => mended.into_bytes(),
        };
        Ok(())
    }
}

impl<R: std::io::Read> std::io::Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.out.len() {
            if self.done {
                return Ok(0);
            }
            self.refill()?;
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The UTF-8 BOM as a Windows console shows it (CP437), which PowerShell then saves as text.
const MANGLED_BOM: &str = "\u{2229}\u{2557}\u{2510}";

/// Splits a line of `gh run view --log` / `--log-failed` output, `job TAB step TAB message`,
/// where the message starts with a GitHub timestamp (after an optional BOM, or a BOM mangled
/// by a Windows console): the job name and the offset of the message (past any BOM).
/// `None` for a line of any other shape.
pub fn gh_log_prefix(line: &[u8]) -> Option<(&[u8], usize)> {
    let first = memchr::memchr(b'\t', line)?;
    let second = first + 1 + memchr::memchr(b'\t', &line[first + 1..])?;
    let mut at = second + 1;
    for bom in [BOM, MANGLED_BOM.as_bytes()] {
        if line[at..].starts_with(bom) {
            at += bom.len();
        }
    }
    let rest = line[at..].strip_suffix(b"\r").unwrap_or(&line[at..]);
    (timestamp_len(rest) > 0).then_some((&line[..first], at))
}

/// Magic numbers of compressed and archive formats a log is never in.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x1f\x8b", "gzip data"),
    (b"\x28\xb5\x2f\xfd", "zstd data"),
    (b"PK\x03\x04", "zip data"),
    (b"PK\x05\x06", "zip data"),
    (b"\xfd7zXZ\x00", "xz data"),
    (b"BZh", "bzip2 data"),
    (b"7z\xbc\xaf\x27\x1c", "7-zip data"),
    (b"\x7fELF", "an executable"),
];

/// Below this many bytes the byte entropy says little; only the other tests apply.
const ENTROPY_MIN_SAMPLE: usize = 512;
/// Bits per byte above which a sample is compressed or random data. Text, UTF-8 in any
/// script included, stays well below (English logs ≈ 5, CJK ≈ 6.5); compressed data is ≈ 8.
const ENTROPY_BINARY: f64 = 7.5;

/// Why a sample of a file (its first block) is not a text log: many NUL bytes, the magic number
/// of a compressed or archive format (gzip, zstd, zip, xz, bzip2, 7-zip, ELF), or bytes as
/// evenly spread as compressed or random data. `None` for text.
pub fn binary_reason(sample: &[u8]) -> Option<&'static str> {
    let bom = b"\xef\xbb\xbf";
    let body = sample.strip_prefix(bom).unwrap_or(sample);
    if let Some((_, what)) = MAGIC.iter().find(|(magic, _)| body.starts_with(magic)) {
        // `BZh` is also how a line of text may start: bzip2 has a block size digit after it.
        if *what != "bzip2 data" || body.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
            return Some(what);
        }
    }
    if looks_binary(sample) {
        return Some("many NUL bytes");
    }
    if sample.len() >= ENTROPY_MIN_SAMPLE && entropy(sample) > ENTROPY_BINARY {
        return Some("compressed or random bytes");
    }
    None
}

/// Shannon entropy of the byte distribution, in bits per byte (0 to 8).
fn entropy(sample: &[u8]) -> f64 {
    let mut counts = [0u64; 256];
    for &b in sample {
        counts[usize::from(b)] += 1;
    }
    let n = sample.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_timestamp_bom_ansi_and_cr() {
        let raw = b"\xef\xbb\xbf2026-07-15T21:26:03.1234567Z \x1b[36;1mpytest -v\x1b[0m tests/\r";
        assert_eq!(normalize_line(raw), "pytest -v tests/");
    }

    #[test]
    fn keeps_lines_without_timestamp() {
        assert_eq!(normalize_line(b"    continuation"), "    continuation");
        assert_eq!(
            normalize_line(b"2026-07-15 not a timestamp"),
            "2026-07-15 not a timestamp"
        );
    }

    #[test]
    fn timestamp_variants() {
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03.1234567Z x"), 29);
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03Z x"), 21);
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03.1234567Z"), 28);
        assert_eq!(timestamp_len(b"2026-07-15T21:26:03.1234567 x"), 0);
        assert_eq!(timestamp_len(b"2026-07-15X21:26:03.1234567Z x"), 0);
    }

    #[test]
    fn bom_mid_line_and_invalid_utf8() {
        assert_eq!(normalize_line(b"a\xef\xbb\xbfb"), "ab");
        assert_eq!(normalize_line(b"bad \xff byte"), "bad \u{fffd} byte");
    }

    #[test]
    fn escape_sequences_of_every_kind() {
        assert_eq!(normalize_line(b"\x1b]0;title\x07x\x1b(By\x1b[?25lz"), "xyz");
        assert_eq!(normalize_line("a\u{9b}31mb\u{85}c".as_bytes()), "abc");
        assert_eq!(normalize_line(b"lone\x1b"), "lone");
    }

    #[test]
    fn needs_cleaning_only_when_it_matters() {
        assert!(!needs_cleaning("caf\u{e9} \u{fffd} \u{ff01}".as_bytes()));
        assert!(needs_cleaning(b"x\x1b[0m"));
        assert!(needs_cleaning(b"x\xef\xbb\xbf"));
        assert!(needs_cleaning(b"x\xff"));
    }

    #[test]
    fn exit_code_boilerplate() {
        assert!(is_exit_code_boilerplate(
            "##[error]Process completed with exit code 1."
        ));
        assert!(is_exit_code_boilerplate(
            "##[error]Process completed with exit code 137"
        ));
        assert!(!is_exit_code_boilerplate(
            "##[error]Process completed with exit code"
        ));
        assert!(!is_exit_code_boilerplate(
            "Process completed with exit code 1."
        ));
    }

    #[test]
    fn compressed_and_random_data_is_binary_and_text_is_not() {
        let text =
            "2026-07-15T21:26:03.1234567Z E   AssertionError: condition not satisfied\n".repeat(40);
        let gz = {
            use std::io::Write;
            let mut e = zstd::Encoder::new(Vec::new(), 3).unwrap();
            e.write_all(text.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        assert_eq!(binary_reason(&gz), Some("zstd data"));
        assert_eq!(binary_reason(b"\x1f\x8b\x08\x00rest"), Some("gzip data"));
        assert_eq!(binary_reason(b"PK\x03\x04rest"), Some("zip data"));
        // A xorshift stream: random bytes without a magic number.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(binary_reason(&random), Some("compressed or random bytes"));
        assert_eq!(binary_reason(text.as_bytes()), None);
        assert_eq!(
            binary_reason("BZh is how this line starts\n".as_bytes()),
            None
        );
        let cjk = "2026-07-15T21:26:03Z 错误：测试失败，条件在超时内未满足。日本語のログ行です。\n"
            .repeat(60);
        assert_eq!(binary_reason(cjk.as_bytes()), None);
        assert_eq!(binary_reason(b""), None);
    }

    #[test]
    fn binary_detection() {
        assert!(looks_binary(&[0, 0, 0, 1]));
        assert!(looks_binary("a\0b\0c\0".as_bytes()));
        assert!(!looks_binary(b"plain text\n"));
        assert!(!looks_binary(b""));
    }

    #[test]
    fn utf16_both_byte_orders_with_surrogates_across_reads() {
        use std::io::Read;
        let text = "job\tstep\t2026-01-02T03:04:05.1234567Z caf\u{e9} \u{1f600} ok\r\n";
        for be in [false, true] {
            let mut raw = if be {
                vec![0xfe, 0xff]
            } else {
                vec![0xff, 0xfe]
            };
            for u in text.encode_utf16() {
                raw.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
            }
            assert_eq!(utf16_bom(&raw), Some(be));
            // One byte at a time: odd bytes and surrogate pairs straddle reads.
            struct OneByte<'a>(&'a [u8]);
            impl std::io::Read for OneByte<'_> {
                fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                    let n = self.0.len().min(1).min(buf.len());
                    buf[..n].copy_from_slice(&self.0[..n]);
                    self.0 = &self.0[n..];
                    Ok(n)
                }
            }
            let mut out = String::new();
            Utf16Reader::new(OneByte(&raw[2..]), be)
                .read_to_string(&mut out)
                .unwrap();
            assert_eq!(out, text);
        }
        assert_eq!(utf16_bom(b"\xef\xbb\xbfplain"), None);
    }

    /// A console's mojibake in UTF-16 text is mended (both OEM pages, across reads of one byte),
    /// 3-byte sequences only: box drawing and accented words stay as they are.
    #[test]
    fn console_mojibake_is_mended_in_utf16() {
        assert_eq!(
            mend_console_mojibake("  ΓùÅ Cart ΓÇ║ adds an item"),
            "  ● Cart › adds an item"
        );
        assert_eq!(mend_console_mojibake("ÔùÅ Cart ÔÇ║ adds"), "● Cart › adds");
        assert_eq!(mend_console_mojibake("∩╗┐2026-01-02"), "\u{feff}2026-01-02");
        for kept in ["╔═══╗ ║ box ║ ╚═══╝", "Größe: café, naïve, Ωmega", "plain"]
        {
            assert!(
                matches!(mend_console_mojibake(kept), Cow::Borrowed(_)),
                "{kept}"
            );
        }
        let text = "x ΓùÅ Cart ΓÇ║ adds\r\n";
        let raw: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        struct TwoBytes<'a>(&'a [u8]);
        impl std::io::Read for TwoBytes<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(2).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = String::new();
        std::io::Read::read_to_string(&mut Utf16Reader::new(TwoBytes(&raw), false), &mut out)
            .unwrap();
        assert_eq!(out, "x ● Cart › adds\r\n");
    }

    /// UTF-16 without a BOM is recognised in either byte order, CRLF and non-ASCII letters
    /// included; UTF-8 text, a short sample and binary data with NUL pairs are not.
    #[test]
    fn utf16_without_a_bom_is_recognised_by_its_nul_bytes() {
        let text = "FAIL src/cart.test.js\r\n  ● Cart › adds an item\r\n    × adds (5 ms)\r\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(utf16_without_bom(&le), Some(false));
        assert_eq!(utf16_without_bom(&be), Some(true));
        assert_eq!(utf16_without_bom(text.as_bytes()), None);
        assert_eq!(utf16_without_bom(&le[..20]), None);
        let mut binary = le.clone();
        binary.extend_from_slice(&[0, 0, 0, 0]);
        assert_eq!(utf16_without_bom(&binary), None);
        assert_eq!(utf16_without_bom(&[0x90u8, 0].repeat(64)), None);
    }

    #[test]
    fn gh_log_lines() {
        let line =
            "Android Unit Tests\tSet up job\t\u{feff}2026-01-02T03:33:54.0212672Z Current runner";
        let (job, at) = gh_log_prefix(line.as_bytes()).unwrap();
        assert_eq!(job, b"Android Unit Tests");
        assert_eq!(&line[at..at + 4], "2026");
        let mangled =
            "Build\tUNKNOWN STEP\t\u{2229}\u{2557}\u{2510}2025-12-22T10:53:05.2397263Z x\r";
        let (job, at) = gh_log_prefix(mangled.as_bytes()).unwrap();
        assert_eq!((job, &mangled[at..at + 4]), (&b"Build"[..], "2025"));
        assert!(gh_log_prefix(b"2026-01-02T03:33:54.0212672Z a\tb\tc").is_none());
        assert!(gh_log_prefix(b"a\tb\tno timestamp").is_none());
    }
}
