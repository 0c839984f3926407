//! What the command line writes to stdout and stderr (`--check-config`, `--help`,
//! `--version`, `hash-password`, `gen-token`, a refused start). A stream whose reader has gone
//! (`actiond --check-config | head -1`) ends that stream's writing quietly: Rust ignores
//! SIGPIPE, so `println!` would panic on the `EPIPE` instead. The command still does its work
//! and exits with its own status; only another write failure (a full disk behind `> file`)
//! is an error, reported by `finish`. It must not be used once logging is set up (`tracing`
//! writes stderr from then on).

use std::io::{ErrorKind, Write};

/// One of the two streams, written line by line.
pub struct Stream<W: Write> {
    out: W,
    /// Its reader has gone: nothing more is written.
    closed: bool,
    /// The first failure that was not a gone reader.
    failed: Option<std::io::Error>,
}

impl<W: Write> Stream<W> {
    pub fn new(out: W) -> Stream<W> {
        Stream {
            out,
            closed: false,
            failed: None,
        }
    }

    /// Writes `text` as it is.
    pub fn text(&mut self, text: &str) {
        if self.closed || self.failed.is_some() {
            return;
        }
        let written = self.out.write_all(text.as_bytes()).and_then(|()| {
            // Each piece is flushed at once: a prompt must show before the read it asks for.
            self.out.flush()
        });
        self.note(written);
    }

    /// Writes `line` and a newline.
    pub fn line(&mut self, line: &str) {
        self.text(&format!("{line}\n"));
    }

    fn note(&mut self, written: std::io::Result<()>) {
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::BrokenPipe => self.closed = true,
            Err(e) => self.failed = Some(e),
        }
    }

    /// What went wrong with the stream, unless it was only its reader going.
    pub fn finish(mut self) -> std::io::Result<()> {
        let flushed = if self.closed || self.failed.is_some() {
            Ok(())
        } else {
            self.out.flush()
        };
        self.note(flushed);
        self.failed.map_or(Ok(()), Err)
    }
}

/// The process's stdout and stderr.
pub struct Console {
    pub out: Stream<std::io::Stdout>,
    pub err: Stream<std::io::Stderr>,
}

impl Console {
    pub fn new() -> Console {
        Console {
            out: Stream::new(std::io::stdout()),
            err: Stream::new(std::io::stderr()),
        }
    }

    /// The command's exit status `code`, unless what it wrote could not be (exit 1): a gone
    /// reader is not such a failure, the reader took what it wanted.
    pub fn finish(self, code: std::process::ExitCode) -> std::process::ExitCode {
        let Console { out, mut err } = self;
        let out = out.finish();
        if let Err(e) = &out {
            err.line(&format!("actiond: cannot write to stdout: {e}"));
        }
        match (out, err.finish()) {
            (Ok(()), Ok(())) => code,
            _ => std::process::ExitCode::FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes `room` bytes, then fails with `kind`.
    struct Sink {
        taken: Vec<u8>,
        room: usize,
        kind: ErrorKind,
        calls: usize,
    }

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.taken.len() + buf.len() > self.room {
                return Err(self.kind.into());
            }
            self.taken.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_gone_reader_ends_the_writing_quietly_and_any_other_failure_is_kept() {
        // (room, failure) -> (bytes taken, finish is an error, write calls)
        let cases = [
            (100, ErrorKind::BrokenPipe, "a\nb\nc\n", false, 3),
            (2, ErrorKind::BrokenPipe, "a\n", false, 2),
            (0, ErrorKind::BrokenPipe, "", false, 1),
            (2, ErrorKind::StorageFull, "a\n", true, 2),
            (0, ErrorKind::PermissionDenied, "", true, 1),
        ];
        for (i, (room, kind, taken, fails, calls)) in cases.into_iter().enumerate() {
            let mut s = Stream::new(Sink {
                taken: Vec::new(),
                room,
                kind,
                calls: 0,
            });
            for line in ["a", "b", "c"] {
                s.line(line);
            }
            assert_eq!(s.out.taken, taken.as_bytes(), "case {i}");
            assert_eq!(
                s.out.calls, calls,
                "case {i}: nothing written after a failure"
            );
            assert_eq!(s.finish().is_err(), fails, "case {i}");
        }
    }
}
