//! Job name → matrix dimensions (`job`, `platform`, `python`, `cuda`, `gpu`, `driver model`,
//! `source`, …).
//!
//! GitHub names a matrix job `job (v1, v2, …)`, and reusable workflows name it
//! `caller / called`; projects put their matrix values in either part, keyed (`Python 3.14t`,
//! `python-version: 3.14t`, `GPU a100`) or bare (`py3.14t`, `12.9.1`, `t4`). The defaults read
//! those forms through vocabularies of common values, so most repositories need no configuration.
//! Names the defaults cannot read take a `[matrix] pattern` regex in `flakestat.toml` whose named
//! groups are the dimensions. Pure: no I/O.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

/// Dimension name → value, e.g. `python` → `3.14t`.
pub type Dimensions = BTreeMap<String, String>;

/// The dimension holding the job's own name (the part before ` / ` or ` (`).
pub const JOB: &str = "job";

/// The dimension of a Windows GPU's driver model (`TCC`, `MCDM`, `WDDM`), which job names give
/// as a qualifier of the GPU (`GPU a100 (MCDM)`): a dimension of its own, so that one GPU under
/// two driver models is one `gpu` value, and a failure confined to a driver model shows there.
pub const DRIVER_MODEL: &str = "driver model";

/// Reads job names. `Default` uses the built-in vocabularies only.
#[derive(Debug, Clone, Default)]
pub struct MatrixParser {
    pattern: Option<Regex>,
}

impl MatrixParser {
    /// A parser that tries `pattern` (named groups are dimensions) before the defaults.
    pub fn with_pattern(pattern: Regex) -> MatrixParser {
        MatrixParser {
            pattern: Some(pattern),
        }
    }

    /// The dimensions of one job name. Never fails: what is not understood is left out (or kept
    /// under `matrix[N]` for an unrecognized value of GitHub's `job (v1, v2)` form).
    pub fn parse(&self, name: &str) -> Dimensions {
        if let Some(re) = &self.pattern
            && let Some(caps) = re.captures(name)
        {
            let mut dims = Dimensions::new();
            for group in re.capture_names().flatten() {
                if let Some(m) = caps.name(group) {
                    let value = m.as_str().trim();
                    if !value.is_empty() {
                        dims.insert(group.to_string(), value.to_string());
                    }
                }
            }
            if !dims.contains_key(JOB) {
                dims.insert(JOB.to_string(), split_job(name).0.to_string());
            }
            return dims;
        }
        parse_job_name(name)
    }
}

/// The built-in reading of a job name.
pub fn parse_job_name(name: &str) -> Dimensions {
    let name = name.trim();
    let (head, rest, matrix_form) = split_job(name);
    let mut dims = Dimensions::new();
    dims.insert(JOB.to_string(), head.to_string());
    // Values in the head (`Test win-64`) are read word by word; unknown words are the job's name.
    for word in head.split_whitespace() {
        if let Some((dim, value)) = classify_bare(word) {
            dims.entry(dim.to_string()).or_insert(value);
        }
    }
    for (index, segment) in split_top_level(rest).into_iter().enumerate() {
        read_segment(segment, index + 1, matrix_form, &mut dims);
    }
    // A bare `18.17.0` is a CUDA version only where CUDA is in play: a GPU, or CUDA named.
    let lower = name.to_ascii_lowercase();
    if !dims.contains_key("gpu")
        && !["cuda", "cu1", "ctk", "gpu"]
            .iter()
            .any(|w| lower.contains(w))
        && let Some(version) = dims.remove("cuda")
    {
        dims.insert("version".to_string(), version);
    }
    dims
}

/// `(head, rest, is GitHub's "job (values)" form)`.
fn split_job(name: &str) -> (&str, &str, bool) {
    if let Some((head, rest)) = name.split_once(" / ") {
        return (head.trim(), rest.trim(), false);
    }
    if name.ends_with(')')
        && let Some(open) = name.find(" (")
    {
        return (name[..open].trim(), &name[open + 2..name.len() - 1], true);
    }
    (name, "", false)
}

/// Splits on commas (and further ` / `) that are not inside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            b'/' if depth == 0
                && i > 0
                && bytes[i - 1] == b' '
                && bytes.get(i + 1) == Some(&b' ') =>
            {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn read_segment(segment: &str, position: usize, matrix_form: bool, dims: &mut Dimensions) {
    // A trailing `(qualifier)`: a value of its own (`(wheels)`, `(MCDM)`: the driver model) or
    // part of this one.
    let (main, qualifier) = match segment.strip_suffix(')').and_then(|s| s.rsplit_once(" (")) {
        Some((main, q)) => (main.trim(), Some(q.trim())),
        None => (segment, None),
    };
    let mut read = read_value(main);
    if let Some(q) = qualifier {
        match classify_bare(q) {
            Some((dim, value)) if read.as_ref().is_none_or(|(d, _)| *d != dim) => {
                dims.entry(dim).or_insert(value);
            }
            _ => {
                if let Some((_, value)) = &mut read {
                    value.push_str(&format!(" ({q})"));
                }
            }
        }
    }
    match read {
        Some((dim, value)) => {
            dims.entry(dim).or_insert(value);
        }
        None if matrix_form && !main.is_empty() => {
            dims.entry(format!("matrix[{position}]"))
                .or_insert_with(|| main.to_string());
        }
        None => {}
    }
}

/// A keyed (`Python 3.14t`, `cuda-version: 12.9`, `os=ubuntu-latest`) or bare value.
fn read_value(text: &str) -> Option<(String, String)> {
    let text = text.trim();
    if let Some((key, value)) = split_keyed(text) {
        let key = key.to_ascii_lowercase();
        let value = value.trim();
        let dim = dimension_for_key(&key);
        let value = match dim.as_str() {
            "python" => normalize_python(value).unwrap_or_else(|| value.to_string()),
            "cuda" => normalize_cuda(value).unwrap_or_else(|| value.to_string()),
            DRIVER_MODEL => value.to_ascii_uppercase(),
            _ => value.to_string(),
        };
        return Some((dim, value));
    }
    classify_bare(text)
}

/// `key: value`, `key=value`, or a known key word followed by a value (`GPU a100`).
static KEYED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)^(?:
            (?P<key>[a-z][a-z0-9_.-]*)\s*[:=]\s*(?P<value>\S.*)
          | (?P<key2>python|py|cuda|gpu|os|platform|arch|compiler|cc|runner)\s+(?P<value2>\S.*)
        )$",
    )
    .expect("built-in keyed pattern compiles")
});

/// The key and value of a keyed segment, from whichever alternative of `KEYED` matched.
fn split_keyed(text: &str) -> Option<(&str, &str)> {
    let caps = KEYED.captures(text)?;
    let key = caps.name("key").or_else(|| caps.name("key2"))?.as_str();
    let value = caps.name("value").or_else(|| caps.name("value2"))?.as_str();
    Some((key, value))
}

fn dimension_for_key(key: &str) -> String {
    let k = key.replace(['_', '.'], "-");
    let dim = match k.as_str() {
        "py" | "python" | "python-version" | "py-ver" | "pyver" | "python-ver" => "python",
        "cuda" | "cuda-version" | "cuda-ver" | "ctk" | "ctk-version" => "cuda",
        "gpu" | "gpu-type" | "gpu-model" => "gpu",
        "os" | "platform" | "runs-on" | "runner" | "host-platform" => "platform",
        "arch" | "architecture" => "arch",
        "compiler" | "cc" | "toolchain" => "compiler",
        "source" | "test-source" | "local-ctk" => "source",
        "driver-model" | "driver-mode" => DRIVER_MODEL,
        other => return other.to_string(),
    };
    dim.to_string()
}

/// A value recognized by its vocabulary alone: `win-64`, `py3.14t`, `12.9.1`, `t4`, `wheels`…
fn classify_bare(word: &str) -> Option<(String, String)> {
    let w = word.trim();
    if w.is_empty() {
        return None;
    }
    let lower = w.to_ascii_lowercase();
    if PLATFORM.is_match(&lower) {
        return Some(("platform".into(), w.to_string()));
    }
    if ARCH.is_match(&lower) {
        return Some(("arch".into(), w.to_string()));
    }
    if let Some(py) = normalize_python(&lower) {
        return Some(("python".into(), py));
    }
    if let Some(cuda) = normalize_cuda(&lower) {
        return Some(("cuda".into(), cuda));
    }
    if GPU.is_match(&lower) {
        return Some(("gpu".into(), w.to_string()));
    }
    if DRIVER_MODELS.is_match(&lower) {
        return Some((DRIVER_MODEL.into(), w.to_ascii_uppercase()));
    }
    if SOURCE.is_match(&lower) {
        return Some(("source".into(), lower));
    }
    if COMPILER.is_match(&lower) {
        return Some(("compiler".into(), w.to_string()));
    }
    None
}

static PLATFORM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?:linux|win|windows|osx|macos|mac|darwin|ubuntu|debian|rhel|rocky|alma|centos|fedora|manylinux\w*|musllinux\w*)(?:[-_][a-z0-9._-]+)?|win32|win64)$",
    )
    .expect("built-in platform pattern compiles")
});

static ARCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:x86_64|x86-64|amd64|x64|x86|i686|aarch64|arm64|armv7l?|ppc64le|s390x|riscv64)$",
    )
    .expect("built-in arch pattern compiles")
});

static GPU: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:t4|l4|l40s?|a2|a10g?|a16|a30|a40|a100|a6000|h100|h200|h20|gh200|b100|b200|gb200|v100|p100|p4|k80|rtx[a-z0-9_-]*|gtx[a-z0-9_-]*|mi\d{2,3}x?)$",
    )
    .expect("built-in GPU pattern compiles")
});

/// Windows display driver models: TCC (compute only), MCDM, WDDM (display).
static DRIVER_MODELS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:tcc|mcdm|wddm)$").expect("built-in driver model pattern compiles")
});

static SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:local|wheels?|sdist|conda)$").expect("built-in source pattern compiles")
});

static COMPILER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:gcc|g\+\+|clang|msvc|mingw|icx|nvhpc|nvc\+\+)(?:[-_]?\d[\d.]*)?$")
        .expect("built-in compiler pattern compiles")
});

/// `3.14t`, `py3.14t`, `python3.12`, `py314t`, `cp314t`, `3.10.4` → the version (`3.14t`…).
fn normalize_python(text: &str) -> Option<String> {
    static DOTTED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:python|py|cp)?-?(?P<v>[23]\.\d{1,2}(?:\.\d+)?)(?P<t>t)?$")
            .expect("built-in python pattern compiles")
    });
    static PACKED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:py|cp)(?P<maj>[23])(?P<min>\d{1,2})(?P<t>t)?$")
            .expect("built-in python pattern compiles")
    });
    let t = text.to_ascii_lowercase();
    if let Some(c) = DOTTED.captures(&t) {
        return Some(format!(
            "{}{}",
            &c["v"],
            c.name("t").map_or("", |m| m.as_str())
        ));
    }
    if let Some(c) = PACKED.captures(&t) {
        return Some(format!(
            "{}.{}{}",
            &c["maj"],
            &c["min"],
            c.name("t").map_or("", |m| m.as_str())
        ));
    }
    None
}

/// `12.9.1`, `cuda12.9`, `cu129`, `cuda-13.0.2` → the version. Bare versions need a major of at
/// least 9 so that Python's `3.12` is never read as CUDA.
fn normalize_cuda(text: &str) -> Option<String> {
    static DOTTED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:cuda[-_]?)?(?P<v>(?:9|1\d)\.\d+(?:\.\d+)?)$")
            .expect("built-in cuda pattern compiles")
    });
    static NAMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^cuda[-_]?(?P<v>\d+(?:\.\d+){0,2})$").expect("built-in cuda pattern compiles")
    });
    static PACKED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^cu(?P<maj>1\d)(?P<min>\d)?$").expect("built-in cuda pattern compiles")
    });
    let t = text.to_ascii_lowercase();
    if let Some(c) = DOTTED.captures(&t).or_else(|| NAMED.captures(&t)) {
        return Some(c["v"].to_string());
    }
    if let Some(c) = PACKED.captures(&t) {
        return Some(match c.name("min") {
            Some(min) => format!("{}.{}", &c["maj"], min.as_str()),
            None => c["maj"].to_string(),
        });
    }
    None
}

/// Orders matrix values the way people read them: numbers by value (`3.9` < `3.10` < `3.14t`),
/// text alphabetically.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut digit = None;
        for (i, c) in s.char_indices() {
            let d = c.is_ascii_digit();
            if digit.is_some_and(|prev| prev != d) {
                out.push((digit.unwrap_or(false), &s[start..i]));
                start = i;
            }
            digit = Some(d);
        }
        if start < s.len() {
            out.push((digit.unwrap_or(false), &s[start..]));
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, sa), (db, sb)) in ca.iter().zip(cb.iter()) {
        let ord = match (da, db) {
            (true, true) => {
                let na = sa.trim_start_matches('0');
                let nb = sb.trim_start_matches('0');
                na.len().cmp(&nb.len()).then_with(|| na.cmp(nb))
            }
            _ => sa.cmp(sb),
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(pairs: &[(&str, &str)]) -> Dimensions {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Job names as real CI systems write them, and the dimensions the defaults read.
    const JOB_NAMES: &[(&str, &[(&str, &str)])] = &[
        (
            "Test win-64 / Python 3.14t, CUDA 13.0.2 (wheels), GPU a100 (MCDM)",
            &[
                ("job", "Test win-64"),
                ("platform", "win-64"),
                ("python", "3.14t"),
                ("cuda", "13.0.2"),
                ("source", "wheels"),
                ("gpu", "a100"),
                ("driver model", "MCDM"),
            ],
        ),
        // The driver model is a dimension of its own: `t4` and `t4 (TCC)` are one GPU.
        (
            "Test win-64 / Python 3.12, CUDA 12.9.1 (local), GPU t4 (TCC)",
            &[
                ("job", "Test win-64"),
                ("platform", "win-64"),
                ("python", "3.12"),
                ("cuda", "12.9.1"),
                ("source", "local"),
                ("gpu", "t4"),
                ("driver model", "TCC"),
            ],
        ),
        (
            "test (win-64, 3.13, rtx4090 (wddm))",
            &[
                ("job", "test"),
                ("platform", "win-64"),
                ("python", "3.13"),
                ("gpu", "rtx4090"),
                ("driver model", "WDDM"),
            ],
        ),
        (
            "gpu-tests (windows-2022, gpu: l4, driver-model: tcc)",
            &[
                ("job", "gpu-tests"),
                ("platform", "windows-2022"),
                ("gpu", "l4"),
                ("driver model", "TCC"),
            ],
        ),
        // Any other qualifier stays part of the value.
        (
            "Test linux-64 / Python 3.12, GPU a100 (80GB)",
            &[
                ("job", "Test linux-64"),
                ("platform", "linux-64"),
                ("python", "3.12"),
                ("gpu", "a100 (80GB)"),
            ],
        ),
        (
            "Test linux-64 / py3.14t, 12.9.1, local, t4",
            &[
                ("job", "Test linux-64"),
                ("platform", "linux-64"),
                ("python", "3.14t"),
                ("cuda", "12.9.1"),
                ("source", "local"),
                ("gpu", "t4"),
            ],
        ),
        (
            "Test linux-aarch64 / py3.12, 13.0.2, wheels, l4",
            &[
                ("job", "Test linux-aarch64"),
                ("platform", "linux-aarch64"),
                ("python", "3.12"),
                ("cuda", "13.0.2"),
                ("source", "wheels"),
                ("gpu", "l4"),
            ],
        ),
        (
            "Test linux-64 / Python 3.14t, CUDA 12.9.1 (local), GPU t4",
            &[
                ("job", "Test linux-64"),
                ("platform", "linux-64"),
                ("python", "3.14t"),
                ("cuda", "12.9.1"),
                ("source", "local"),
                ("gpu", "t4"),
            ],
        ),
        (
            "Build linux-64 / py3.14t",
            &[
                ("job", "Build linux-64"),
                ("platform", "linux-64"),
                ("python", "3.14t"),
            ],
        ),
        (
            "test (ubuntu-latest, 3.12)",
            &[
                ("job", "test"),
                ("platform", "ubuntu-latest"),
                ("python", "3.12"),
            ],
        ),
        (
            "tests (macos-14, 3.10, clang-17, arm64)",
            &[
                ("job", "tests"),
                ("platform", "macos-14"),
                ("python", "3.10"),
                ("compiler", "clang-17"),
                ("arch", "arm64"),
            ],
        ),
        (
            "build (windows-2022, python-version: 3.14t)",
            &[
                ("job", "build"),
                ("platform", "windows-2022"),
                ("python", "3.14t"),
            ],
        ),
        (
            "unit (ubuntu-latest, nightly)",
            &[
                ("job", "unit"),
                ("platform", "ubuntu-latest"),
                ("matrix[2]", "nightly"),
            ],
        ),
        (
            "Test / cuda12.8 / h100 / gcc-13",
            &[
                ("job", "Test"),
                ("cuda", "12.8"),
                ("gpu", "h100"),
                ("compiler", "gcc-13"),
            ],
        ),
        ("lint", &[("job", "lint")]),
        (
            "test (ubuntu-latest, 18.17.0)",
            &[
                ("job", "test"),
                ("platform", "ubuntu-latest"),
                ("version", "18.17.0"),
            ],
        ),
        (
            "gpu-tests (ubuntu-22.04, 12.4)",
            &[
                ("job", "gpu-tests"),
                ("platform", "ubuntu-22.04"),
                ("cuda", "12.4"),
            ],
        ),
        (
            "smoke (cp314t, cu129, rtx4090)",
            &[
                ("job", "smoke"),
                ("python", "3.14t"),
                ("cuda", "12.9"),
                ("gpu", "rtx4090"),
            ],
        ),
    ];

    #[test]
    fn default_reading_of_job_names() {
        for (name, want) in JOB_NAMES {
            assert_eq!(parse_job_name(name), dims(want), "{name}");
        }
    }

    #[test]
    fn a_configured_pattern_wins_and_defaults_remain_the_fallback() {
        let re = Regex::new(r"^(?P<job>\w+)-(?P<python>\d\.\d+t?)-(?P<gpu>[a-z0-9]+)$").unwrap();
        let parser = MatrixParser::with_pattern(re);
        assert_eq!(
            parser.parse("unit-3.14t-a100"),
            dims(&[("job", "unit"), ("python", "3.14t"), ("gpu", "a100")])
        );
        assert_eq!(
            parser.parse("test (ubuntu-latest, 3.12)"),
            parse_job_name("test (ubuntu-latest, 3.12)")
        );
    }

    #[test]
    fn python_and_cuda_versions_are_not_confused() {
        assert_eq!(normalize_python("3.12"), Some("3.12".into()));
        assert_eq!(normalize_cuda("3.12"), None);
        assert_eq!(normalize_python("12.9"), None);
        assert_eq!(normalize_cuda("12.9"), Some("12.9".into()));
    }

    #[test]
    fn natural_order_of_values() {
        let mut v = vec!["3.14t", "3.10", "3.9", "3.14", "12.9.1", "11.8"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["3.9", "3.10", "3.14", "3.14t", "11.8", "12.9.1"]);
    }
}
