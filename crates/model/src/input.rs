//! Reading input files with a size limit, so that `/dev/zero` given as a spec, a traffic file
//! or a shard ends with an error naming the limit instead of reading until memory runs out.
//!
//! A regular file larger than the limit is refused before anything is read (its size is in its
//! metadata); a stream (a FIFO, `/dev/stdin`, a character device) is read up to the limit and
//! refused when there is more.

use std::io::Read;
use std::path::Path;

/// The largest YAML file read (a spec, a scenario, a job, a cluster, an operations file, a
/// sweep): 64 MiB, some hundred times the largest example.
pub const YAML_LIMIT_BYTES: u64 = 64 << 20;

/// The largest traffic matrix, shard or trace index read as text: 2 GiB, about 40 million
/// flows of an htsim `.cm` file, past what either engine can simulate on one machine.
pub const DATA_LIMIT_BYTES: u64 = 2 << 30;

/// The environment variable that overrides both limits (bytes), for a machine that has the
/// memory for larger inputs.
pub const LIMIT_ENV: &str = "AIFABRIC_MAX_INPUT_BYTES";

/// `limit`, or the override of [`LIMIT_ENV`] when it is set to a number.
pub fn effective_limit(limit: u64) -> u64 {
    std::env::var(LIMIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(limit)
}

/// Read `path` as UTF-8 text, refusing more than `limit` bytes (see [`effective_limit`]) with
/// an error of kind [`std::io::ErrorKind::FileTooLarge`] that says the limit and how to raise it.
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    let bytes = read_bytes(path, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Read `path` as bytes, refusing more than `limit` bytes (see [`read_text`]).
pub fn read_bytes(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let limit = effective_limit(limit);
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory, not a file",
        ));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(Some(meta.len()), limit));
    }
    let hint = if meta.is_file() { meta.len() } else { 0 };
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None, limit));
    }
    Ok(bytes)
}

fn too_large(size: Option<u64>, limit: u64) -> std::io::Error {
    let what = match size {
        Some(s) => format!("{s} bytes, more than"),
        None => "a stream longer than".to_owned(),
    };
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!(
            "{what} the input limit of {limit} bytes; give a smaller file, or raise the limit \
             with {LIMIT_ENV}=BYTES if this machine has the memory"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_cut_at_the_limit() {
        let e = read_bytes(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains(LIMIT_ENV), "{e}");
    }

    #[test]
    fn a_large_file_is_refused_before_reading() {
        let dir = std::env::temp_dir().join(format!("aifabric-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("big");
        std::fs::write(&p, vec![b'a'; 2048]).unwrap();
        let e = read_text(&p, 1024).unwrap_err();
        assert!(e.to_string().starts_with("2048 bytes"), "{e}");
        assert_eq!(read_text(&p, 4096).unwrap().len(), 2048);
        assert_eq!(
            read_text(&dir, 4096).unwrap_err().kind(),
            std::io::ErrorKind::IsADirectory
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
