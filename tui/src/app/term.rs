//! The terminal: raw mode, the alternate screen and mouse capture on the way in; all of
//! it undone on the way out, by a guard on return and by the panic hook on a panic, so a
//! crash never leaves the shell unusable.
use std::io::{self, Stdout};

use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use super::{update, view, State};

/// Undoes everything [`enter`] did. Safe to call more than once.
pub fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Chains `restore` in front of the panic hook in place, so a panic leaves the terminal
/// usable before the message is printed.
fn hook_restore(restore: fn()) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

fn enter() -> io::Result<Terminal<CrosstermBackend<Stdout>>> {
    hook_restore(restore);
    terminal::enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
    Terminal::new(CrosstermBackend::new(io::stdout()))
}

/// Runs the UI until the user quits. `make` builds the state for the terminal's size.
pub fn run(make: impl FnOnce((u16, u16)) -> anyhow::Result<State>) -> anyhow::Result<()> {
    let size = terminal::size().unwrap_or((80, 24));
    // Build the state first: loading the wiki and analysing a file may fail, and the
    // error is better read on the normal screen.
    let mut state = make(size)?;
    let _guard = Guard;
    let mut term = enter()?;
    let s = term.size()?;
    update(&mut state, super::Action::Resize(s.width, s.height));
    while !state.quit {
        term.draw(|f| view(&state, f))?;
        // Wait for a key, a click or a resize, or for background work (a file's
        // diagnostics) to arrive.
        loop {
            if event::poll(std::time::Duration::from_millis(50))? {
                let ev = event::read()?;
                if let Some(a) = state.action_for(&ev) {
                    update(&mut state, a);
                }
                break;
            }
            if state.poll_background() {
                break;
            }
        }
        // Coalesce what arrived meanwhile (a burst of wheel events, a fast typist)
        // into one frame.
        while !state.quit && event::poll(std::time::Duration::ZERO)? {
            let ev = event::read()?;
            if let Some(a) = state.action_for(&ev) {
                update(&mut state, a);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    static RESTORED: AtomicBool = AtomicBool::new(false);

    #[test]
    fn a_panic_restores_the_terminal_before_anything_else() {
        let original = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        super::hook_restore(|| RESTORED.store(true, Ordering::SeqCst));
        let r = std::panic::catch_unwind(|| panic!("boom"));
        let _ = std::panic::take_hook();
        std::panic::set_hook(original);
        assert!(r.is_err());
        assert!(RESTORED.load(Ordering::SeqCst));
    }
}
