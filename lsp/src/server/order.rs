//! The order in which messages see the server's state, while their work runs side by side.
//!
//! The protocol library reads messages one by one and runs up to
//! [`MAX_IN_FLIGHT`] handlers at once. Each message is given, as it is read, a place
//! in the order ([`Ordered`], a wrapper around the library's service) and a set of earlier
//! messages it must come after:
//!
//! - a message about one document (`params.textDocument.uri`, or the `uri` of an
//!   `executeCommand` argument) comes after the previous message about that document;
//! - a message that changes what every document sees (`initialize`, `initialized`,
//!   `shutdown`, a configuration change, a saved `.kernaut.toml`) comes after every earlier
//!   message, and every later message comes after it;
//! - a message about no document (`workspace/symbol`, `kernaut.search`) comes after the
//!   last of those global ones only;
//! - `$/cancelRequest`, `exit` and unknown methods come after nothing.
//!
//! A handler calls [`Order::admit`] before it reads or changes the state; it waits until
//! the messages it comes after have been admitted, and returns a [`Turn`]. While the turn
//! is held the handler applies its change or takes its snapshot; dropping the turn lets
//! the messages that come after it in. Requests then compute on the snapshot on a blocking
//! thread, so a slow request delays no other message: an edit of the same document
//! is applied as soon as the request has taken its snapshot, and moves the host's
//! revision, which cancels the request (answered `ContentModified`). A message whose
//! handler never asks (the library answered it itself) is admitted when it finishes.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::sync::watch;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_service::Service;

/// How many messages the library handles at once: enough that requests computing on
/// blocking threads never keep an edit or a cancellation from being read.
pub const MAX_IN_FLIGHT: usize = 64;

/// What a message must come after.
#[derive(Clone, Debug, PartialEq, Eq)]
enum After {
    /// Nothing: it may run at once.
    Nothing,
    /// These earlier messages (0 stands for none).
    These([u64; 2]),
    /// Every earlier message.
    Everything,
}

/// The messages admitted so far: every number below `below`, and those in `above`.
#[derive(Debug)]
struct Admitted {
    below: u64,
    above: BTreeSet<u64>,
}

impl Admitted {
    fn contains(&self, seq: u64) -> bool {
        seq < self.below || self.above.contains(&seq)
    }

    fn insert(&mut self, seq: u64) {
        if seq < self.below {
            return;
        }
        self.above.insert(seq);
        while self.above.remove(&self.below) {
            self.below += 1;
        }
    }

    fn allows(&self, seq: u64, after: &After) -> bool {
        match after {
            After::Nothing => true,
            After::These(these) => these.iter().all(|&s| self.contains(s)),
            After::Everything => self.below >= seq,
        }
    }
}

/// Where the reader is: the next number, the last message of each document and the last
/// global message.
#[derive(Debug, Default)]
struct Reader {
    next: u64,
    last_of_doc: HashMap<String, u64>,
    last_global: u64,
}

/// The order of the server's messages (shared by the wrapper that numbers them and the
/// handlers that wait for their turn).
#[derive(Debug)]
pub struct Order {
    reader: Mutex<Reader>,
    admitted: watch::Sender<Admitted>,
}

/// One message's place in the order.
#[derive(Clone, Debug)]
pub struct Ticket {
    seq: u64,
    after: After,
    /// Whether the handler has been admitted (then its turn admits it, not the wrapper).
    asked: Arc<AtomicBool>,
}

tokio::task_local! {
    /// The ticket of the message whose handler the current task runs.
    static TICKET: Ticket;
}

/// A message's turn: while it is held, no message that comes after this one reads or
/// changes the state; dropping it lets them in.
#[must_use = "the turn ends when it is dropped"]
pub struct Turn {
    order: Option<(Arc<Order>, u64)>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some((order, seq)) = self.order.take() {
            order.mark(seq);
        }
    }
}

/// The kind of a message, from its method and parameters.
#[derive(Debug, PartialEq, Eq)]
enum Lane {
    /// About one document (its URI).
    Doc(String),
    /// About no document; after the last global message.
    Workspace,
    /// Changes what every document sees.
    Global,
    /// Needs no order.
    Free,
}

fn lane(method: &str, params: Option<&Value>) -> Lane {
    let doc = params
        .and_then(|p| p.get("textDocument"))
        .and_then(|d| d.get("uri"))
        .and_then(Value::as_str);
    match (method, doc) {
        ("textDocument/didSave", Some(uri))
            if uri.ends_with(kernaut_ide::config::CONFIG_FILE_NAME) =>
        {
            Lane::Global
        }
        (_, Some(uri)) => Lane::Doc(uri.to_string()),
        ("initialize" | "initialized" | "shutdown" | "workspace/didChangeConfiguration", _) => {
            Lane::Global
        }
        ("workspace/executeCommand", _) => {
            let arg_uri = params
                .and_then(|p| p.get("arguments"))
                .and_then(|a| a.get(0))
                .and_then(|a| a.get("uri"))
                .and_then(Value::as_str);
            match arg_uri {
                Some(uri) => Lane::Doc(uri.to_string()),
                None => Lane::Workspace,
            }
        }
        ("workspace/symbol", _) => Lane::Workspace,
        _ => Lane::Free,
    }
}

impl Order {
    /// An empty order.
    pub fn new() -> Arc<Order> {
        Arc::new(Order {
            reader: Mutex::new(Reader {
                next: 1,
                ..Reader::default()
            }),
            admitted: watch::Sender::new(Admitted {
                below: 1,
                above: BTreeSet::new(),
            }),
        })
    }

    /// Gives the message just read (`method`, `params`) its place in the order.
    fn ticket(&self, method: &str, params: Option<&Value>) -> Ticket {
        let mut r = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = r.next;
        r.next += 1;
        let after = match lane(method, params) {
            Lane::Free => After::Nothing,
            Lane::Workspace => After::These([r.last_global, 0]),
            Lane::Doc(uri) => {
                let previous = r.last_of_doc.insert(uri, seq).unwrap_or(0);
                After::These([previous, r.last_global])
            }
            Lane::Global => {
                r.last_global = seq;
                // Every later message comes after this one: the documents' chains restart.
                r.last_of_doc.clear();
                After::Everything
            }
        };
        Ticket {
            seq,
            after,
            asked: Arc::new(AtomicBool::new(false)),
        }
    }

    fn mark(&self, seq: u64) {
        self.admitted.send_modify(|a| a.insert(seq));
    }

    /// Waits until `ticket` may read or change the state.
    async fn wait(&self, ticket: &Ticket) {
        let mut rx = self.admitted.subscribe();
        // The sender lives as long as `self`: waiting cannot fail.
        let _ = rx.wait_for(|a| a.allows(ticket.seq, &ticket.after)).await;
    }

    /// The turn of the message whose handler calls it, once the messages it comes after
    /// have had theirs. Outside a numbered message (a background task) the turn is
    /// immediate and orders nothing.
    pub async fn admit(self: &Arc<Self>) -> Turn {
        let Ok(ticket) = TICKET.try_with(Ticket::clone) else {
            return Turn { order: None };
        };
        if ticket.asked.load(Ordering::SeqCst) {
            // A second call within one message: the first turn already ordered it.
            return Turn { order: None };
        }
        // Dropped while waiting (a cancelled request), the message is still admitted by
        // the wrapper once it finishes.
        self.wait(&ticket).await;
        if ticket.asked.swap(true, Ordering::SeqCst) {
            return Turn { order: None };
        }
        Turn {
            order: Some((self.clone(), ticket.seq)),
        }
    }
}

/// The library's service with every message numbered as it is read (see the module
/// docs).
pub struct Ordered<S> {
    inner: S,
    order: Arc<Order>,
}

impl<S> Ordered<S> {
    /// Wraps `inner`; its handlers ask `order` for their turn.
    pub fn new(inner: S, order: Arc<Order>) -> Ordered<S> {
        Ordered { inner, order }
    }
}

/// Admits a message that finished (or was dropped) without asking for its turn (the
/// library answered it, or a `$/cancelRequest` dropped its handler while it waited), so
/// that those after it are not kept waiting. Its place in the order still holds for
/// them: it is admitted once the messages it comes after are, by a task of its own, so
/// that its answer is not held back.
struct Finish {
    order: Arc<Order>,
    ticket: Ticket,
}

impl Drop for Finish {
    fn drop(&mut self) {
        if self.ticket.asked.swap(true, Ordering::SeqCst) {
            return;
        }
        let (order, ticket) = (self.order.clone(), self.ticket.clone());
        if order.admitted.borrow().allows(ticket.seq, &ticket.after) {
            order.mark(ticket.seq);
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    order.wait(&ticket).await;
                    order.mark(ticket.seq);
                });
            }
            Err(_) => order.mark(ticket.seq),
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> Service<Request> for Ordered<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let ticket = self.order.ticket(req.method(), req.params());
        let order = self.order.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let finish = Finish {
                order,
                ticket: ticket.clone(),
            };
            let r = TICKET.scope(ticket, fut).await;
            drop(finish);
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn after(order: &Order, method: &str, params: Value) -> (u64, After) {
        let t = order.ticket(method, Some(&params));
        (t.seq, t.after)
    }

    #[test]
    fn messages_come_after_their_document_and_the_last_global_one() {
        let order = Order::new();
        let doc = |u: &str| json!({"textDocument": {"uri": u}});
        assert_eq!(
            after(&order, "initialize", json!({})),
            (1, After::Everything)
        );
        assert_eq!(
            after(&order, "textDocument/didOpen", doc("file:///a.cu")),
            (2, After::These([0, 1]))
        );
        assert_eq!(
            after(&order, "textDocument/hover", doc("file:///b.cu")),
            (3, After::These([0, 1]))
        );
        assert_eq!(
            after(&order, "textDocument/hover", doc("file:///a.cu")),
            (4, After::These([2, 1]))
        );
        assert_eq!(
            after(
                &order,
                "workspace/executeCommand",
                json!({"command": "kernaut.search", "arguments": ["x"]})
            ),
            (5, After::These([1, 0]))
        );
        assert_eq!(
            after(
                &order,
                "workspace/executeCommand",
                json!({"command": "kernaut.kernelReport", "arguments": [{"uri": "file:///a.cu", "kernel": "k"}]})
            ),
            (6, After::These([4, 1]))
        );
        assert_eq!(
            after(&order, "$/cancelRequest", json!({"id": 3})),
            (7, After::Nothing)
        );
        assert_eq!(
            after(
                &order,
                "textDocument/didSave",
                doc("file:///p/.kernaut.toml")
            ),
            (8, After::Everything)
        );
        assert_eq!(
            after(&order, "textDocument/didChange", doc("file:///a.cu")),
            (9, After::These([0, 8]))
        );
    }

    #[test]
    fn admitted_messages_are_counted_in_any_order() {
        let mut a = Admitted {
            below: 1,
            above: BTreeSet::new(),
        };
        a.insert(2);
        assert!(!a.allows(3, &After::Everything));
        assert!(a.allows(3, &After::These([2, 0])));
        a.insert(1);
        assert_eq!(a.below, 3);
        assert!(a.allows(3, &After::Everything));
        assert!(a.above.is_empty());
    }

    #[tokio::test]
    async fn a_message_dropped_while_waiting_keeps_its_place_without_waiting() {
        let order = Order::new();
        let doc = json!({"textDocument": {"uri": "file:///a.cu"}});
        let first = order.ticket("textDocument/didOpen", Some(&doc));
        let cancelled = order.ticket("textDocument/hover", Some(&doc));
        let last = order.ticket("textDocument/hover", Some(&doc));
        let held = TICKET.scope(first, order.admit()).await;
        // Dropped while it waits (as a cancelled request is): done at once.
        drop(Finish {
            order: order.clone(),
            ticket: cancelled,
        });
        let o = order.clone();
        let waiting = tokio::spawn(TICKET.scope(last, async move {
            let _turn = o.admit().await;
        }));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "it still comes after the first");
        drop(held);
        waiting.await.unwrap();
    }

    #[tokio::test]
    async fn a_turn_waits_for_the_turns_it_comes_after() {
        let order = Order::new();
        let doc = json!({"textDocument": {"uri": "file:///a.cu"}});
        let first = order.ticket("textDocument/didChange", Some(&doc));
        let second = order.ticket("textDocument/hover", Some(&doc));
        let other = order.ticket(
            "textDocument/hover",
            Some(&json!({"textDocument": {"uri": "file:///b.cu"}})),
        );
        let held = TICKET.scope(first, order.admit()).await;
        // Another document's message is not kept waiting.
        drop(TICKET.scope(other, order.admit()).await);
        let o = order.clone();
        let waiting = tokio::spawn(TICKET.scope(second, async move {
            let _turn = o.admit().await;
        }));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        drop(held);
        waiting.await.unwrap();
    }
}
