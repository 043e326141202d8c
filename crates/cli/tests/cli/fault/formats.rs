//! Malformed inputs per format: every file a command reads, given garbage (random bytes,
//! an empty file, a YAML alias bomb, nesting a parser could recurse on forever), is refused
//! as bad input (exit 2) with the file named: never a panic, an abort or a hang.

use super::common::refused;
use std::path::Path;
use std::time::Duration;

/// The malformed files, by name, written into `dir`.
fn malformed(dir: &Path) -> Vec<String> {
    // "Billion laughs": ten levels of nine aliases each, 9^10 strings if expanded.
    let mut laughs =
        vec![r#"a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]"#.to_owned()];
    for i in 1..10u8 {
        let (prev, cur) = ((b'a' + i - 1) as char, (b'a' + i) as char);
        let refs = vec![format!("*{prev}"); 9].join(",");
        laughs.push(format!("{cur}: &{cur} [{refs}]"));
    }
    // Bytes of every value, and a fixed pseudo-random stream (xorshift), as a fuzzer's.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..65_536)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("laughs.yaml", laughs.join("\n").into_bytes()),
        (
            "deep.yaml",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        ("bytes.yaml", (0..=255u8).cycle().take(2560).collect()),
        ("noise.yaml", noise),
        (
            "truncated.yaml",
            b"name: x\nregions:\n  - name: \"east".to_vec(),
        ),
    ];
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    files
        .iter()
        .map(|(n, _)| dir.join(n).display().to_string())
        .collect()
}

#[test]
fn every_format_refuses_garbage() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.yaml").display().to_string();
    for f in malformed(tmp.path()) {
        let f = f.as_str();
        let cases: Vec<Vec<&str>> = vec![
            vec!["build", f],
            vec!["job", "htsim-k8", "--job", f],
            vec!["cluster", "htsim-k8", "--jobs", f],
            vec!["plan", "htsim-k8", "--jobs", f, "--ops", f],
            vec!["goodput", "htsim-k8", "--jobs", f, "--rates", f],
            vec!["capacity", "htsim-k8", "--scenario", f],
            vec!["sweep", f],
            vec!["traffic", "htsim-k8", "--tm", f],
            vec![
                "slurm-import",
                "htsim-k8",
                "--squeue-json",
                f,
                "--out",
                &out,
            ],
        ];
        for args in &cases {
            // The file's name in the message (the command and the file are known).
            let name = Path::new(f).file_name().unwrap().to_str().unwrap();
            refused(args, Duration::from_secs(30), &[name]);
        }
    }
}

#[test]
fn a_corrupt_trace_is_refused_with_its_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("trace.0.et"),
        [0x0e, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3],
    )
    .unwrap();
    std::fs::write(dir.join("trace.1.et"), []).unwrap();
    refused(
        &["replay", "htsim-k8", "--trace", dir.to_str().unwrap()],
        Duration::from_secs(30),
        &["trace.", "byte 0"],
    );
}
