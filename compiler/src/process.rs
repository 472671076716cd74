//! Running a toolkit program with a time limit and a cancel flag.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use crate::CancelFlag;

/// What a finished program printed.
pub(crate) struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Why a program did not finish.
#[derive(Debug)]
pub(crate) enum RunError {
    Spawn(std::io::Error),
    Cancelled,
    TimedOut(Duration),
    Wait(std::io::Error),
}

/// Runs `command` to the end, or kills it (and the processes it started) when
/// `cancel` is set or `timeout` passes. Stdin is closed; both outputs are read on
/// their own threads so neither pipe can fill up and stall the program.
pub(crate) fn run(
    mut command: Command,
    timeout: Duration,
    cancel: &CancelFlag,
) -> Result<Finished, RunError> {
    if cancel.load(Ordering::Relaxed) {
        return Err(RunError::Cancelled);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so that a kill reaches cicc and ptxas too.
        command.process_group(0);
    }
    let mut child = spawn(&mut command)?;
    let stdout = child.stdout.take().map(reader);
    let stderr = child.stderr.take().map(reader);
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(RunError::Wait(e)),
        }
        if cancel.load(Ordering::Relaxed) {
            break Err(RunError::Cancelled);
        }
        if start.elapsed() >= timeout {
            break Err(RunError::TimedOut(timeout));
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    if outcome.is_err() {
        kill(&mut child);
    }
    let stdout = stdout.map(join).unwrap_or_default();
    let stderr = stderr.map(join).unwrap_or_default();
    outcome.map(|status| Finished {
        status,
        stdout,
        stderr,
    })
}

/// Spawns, retrying briefly on `ETXTBSY`: an executable that was just written can
/// still be open for writing in a child another thread forked (a known race of
/// fork and exec), which makes exec fail for a moment.
fn spawn(command: &mut Command) -> Result<std::process::Child, RunError> {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Ok(child) => return Ok(child),
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempts < 10 => {
                attempts += 1;
                thread::sleep(Duration::from_millis(10 * attempts));
            }
            Err(e) => return Err(RunError::Spawn(e)),
        }
    }
}

fn reader<R: Read + Send + 'static>(mut r: R) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = r.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

fn join(handle: thread::JoinHandle<String>) -> String {
    handle.join().unwrap_or_default()
}

fn kill(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group we
            // created for this child; it touches no memory of ours.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `program --version`, quickly: the first lines of its output.
pub(crate) fn version_text(program: &Path, cancel: &CancelFlag) -> Result<String, String> {
    let mut cmd = Command::new(program);
    cmd.arg("--version");
    match run(cmd, Duration::from_secs(20), cancel) {
        Ok(f) if f.status.success() => Ok(format!("{}{}", f.stdout, f.stderr)),
        Ok(f) => Err(format!(
            "`{} --version` exited with {}: {}",
            program.display(),
            f.status,
            f.stderr.trim()
        )),
        Err(RunError::Spawn(e)) => Err(format!("cannot run {}: {e}", program.display())),
        Err(RunError::TimedOut(t)) => Err(format!(
            "`{} --version` did not answer within {t:?}",
            program.display()
        )),
        Err(RunError::Cancelled) => Err("cancelled".to_string()),
        Err(RunError::Wait(e)) => Err(format!("waiting for {}: {e}", program.display())),
    }
}
