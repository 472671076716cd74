//! The real `ktui` binary in a real terminal (tmux, 80x24): type a symptom into the
//! search box, open the first hit, read the screen. Skipped, with a message, only where
//! tmux is not installed (`.ci/run` installs it).
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "ktui"])
    }

    /// Waits until the screen shows `text`, and returns the screen.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "`{text}` never appeared; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

#[test]
fn a_symptom_typed_into_search_opens_the_pitfall_that_explains_it() {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("skipped: tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let t = Tmux {
        socket: format!("ktui-e2e-{}", std::process::id()),
    };
    let bin = env!("CARGO_BIN_EXE_ktui");
    // After ktui, the shell prints its exit status and waits, so the screen it returns
    // to can be read.
    let script = format!("'{bin}'; echo ktui-exited-$?; sleep 60");
    t.cmd(&[
        "new-session",
        "-d",
        "-s",
        "ktui",
        "-x",
        "80",
        "-y",
        "24",
        "-e",
        "KERNAUT_WIKI=",
        "sh",
        "-c",
        &script,
    ]);
    t.wait_for("all pages");
    t.cmd(&["send-keys", "-t", "ktui", "/"]);
    t.wait_for("search the wiki");
    t.cmd(&[
        "send-keys",
        "-t",
        "ktui",
        "-l",
        "my async copy is slower than the plain loop",
    ]);
    let hits = t.wait_for("pitfall-async-copy#P6");
    assert!(
        hits.contains("/ my async copy is slower than the plain loop"),
        "{hits}"
    );
    t.cmd(&["send-keys", "-t", "ktui", "Enter"]);
    let page = t.wait_for("wiki › pitfall-async-copy");
    assert!(
        page.contains("P6"),
        "the page opens at the hit's anchor:\n{page}"
    );
    assert!(
        page.contains("kind: pitfall"),
        "the frontmatter header shows:\n{page}"
    );
    // q leaves with status 0, and the shell's screen is back: the alternate screen is
    // gone, so none of ktui's frame is left on it.
    t.cmd(&["send-keys", "-t", "ktui", "q"]);
    let after = t.wait_for("ktui-exited-0");
    assert!(
        !after.contains("wiki ›"),
        "the terminal was not restored:\n{after}"
    );
}
