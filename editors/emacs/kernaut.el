;;; kernaut.el --- The kernaut CUDA language server in Emacs (eglot or lsp-mode)  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages, tools, c
;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; Hover, pitfall diagnostics with quick fixes and the wiki commands of kernaut-lsp in
;; CUDA buffers (.cu, .cuh).
;;
;;   (require 'kernaut)
;;   (kernaut-eglot-setup)        ; eglot (built in since Emacs 29; elpa-eglot on 28)
;;   ;; or, with lsp-mode installed: (kernaut-lsp-mode-setup)
;;
;; `kernaut-lsp' is found through `kernaut-server-command', then $KERNAUT_LSP, then
;; `exec-path', then ~/.cargo/bin.  Install it with `cargo install --path lsp' from a
;; kernaut checkout.
;;
;; Commands: `kernaut-search' (search the wiki's pitfalls by symptom),
;; `kernaut-symbol-page' (the wiki page of the symbol at point), `kernaut-show-page',
;; `kernaut-diagnostic-page' (the wiki section a diagnostic at point cites),
;; `kernaut-kernel-report' (the kernel report of the kernel at point), `kernaut-doctor'
;; (what the server uses for this folder, and why), `kernaut-set-arch'.
;;
;; Where no `cuda-mode' is installed, .cu/.cuh files open in `kernaut-cuda-mode', a
;; `c++-mode' with the name CUDA.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'url-util)

(defgroup kernaut nil
  "The kernaut CUDA language server."
  :group 'tools
  :prefix "kernaut-")

(defcustom kernaut-server-command nil
  "Command (a list: program and arguments) that starts kernaut-lsp.
nil: $KERNAUT_LSP, then kernaut-lsp on `exec-path', then
~/.cargo/bin/kernaut-lsp."
  :type '(choice (const :tag "Find kernaut-lsp" nil) (repeat string)))

(defcustom kernaut-arch "sm_90"
  "Target GPU architecture, e.g. \"sm_80\".  A .kernaut.toml overrides it."
  :type 'string)

(defcustom kernaut-wiki-paths nil
  "Extra KernelWiki folders loaded over the built-in pages."
  :type '(repeat directory))

(defcustom kernaut-rules nil
  "Rule levels: an alist of (RULE-ID . LEVEL).
LEVEL is one of off, hint, info, warning, error.  Example:
 \\='((\"bank-conflict\" . \"error\") (\"ilp/over-unroll\" . \"off\"))."
  :type '(alist :key-type string :value-type (choice (const "off") (const "hint") (const "info")
                                                      (const "warning") (const "error"))))

(defcustom kernaut-default-block-size nil
  "Block size assumed where no launch is found.
nil (the server's, 256), a number or (X Y Z)."
  :type '(choice (const nil) integer (list integer integer integer)))

(defcustom kernaut-inlay-hints t
  "Ask for inlay hints."
  :type 'boolean)

(defcustom kernaut-code-lens t
  "Ask for code lenses above kernels."
  :type 'boolean)

(defcustom kernaut-modes '(cuda-mode cuda-ts-mode kernaut-cuda-mode)
  "Major modes in which kernaut-lsp runs."
  :type '(repeat symbol))

(defconst kernaut-install-hint
  "Install it with `cargo install --path lsp' from a kernaut checkout (it lands in ~/.cargo/bin), or set `kernaut-server-command'.")

;;;; A CUDA mode where none is installed

;;;###autoload
(define-derived-mode kernaut-cuda-mode c++-mode "CUDA"
  "Major mode for CUDA sources when no `cuda-mode' is installed.
It is `c++-mode' under another name.  The gcc-based flymake
backends of `c++-mode' are left out: gcc cannot check CUDA."
  (remove-hook 'flymake-diagnostic-functions 'flymake-cc t)
  (remove-hook 'flymake-diagnostic-functions 'flymake-proc-legacy-flymake t))

;;;###autoload
(unless (or (fboundp 'cuda-mode) (locate-library "cuda-mode"))
  (add-to-list 'auto-mode-alist '("\\.cuh?\\'" . kernaut-cuda-mode)))

;;;; Settings

(defun kernaut-server-program ()
  "The kernaut-lsp command as a list, or nil when it cannot be found."
  (let* ((env (getenv "KERNAUT_LSP"))
         (cmd (cond (kernaut-server-command kernaut-server-command)
                    ((and env (not (string-empty-p env))) (list env))
                    (t (list "kernaut-lsp"))))
         (prog (car cmd))
         (cargo (expand-file-name "bin/kernaut-lsp"
                                  (or (getenv "CARGO_HOME") (expand-file-name "~/.cargo"))))
         (found (cond ((file-name-absolute-p (expand-file-name prog))
                       (and (file-executable-p (expand-file-name prog)) (expand-file-name prog)))
                      ((executable-find prog))
                      ((and (equal prog "kernaut-lsp") (file-executable-p cargo)) cargo))))
    (when (and (string-match-p "/" prog) (not found) (file-executable-p (expand-file-name prog)))
      (setq found (expand-file-name prog)))
    (and found (cons found (cdr cmd)))))

(defun kernaut--server-command (&rest _)
  "The server command, or a `user-error' that says how to install it."
  (or (kernaut-server-program)
      (user-error "kernaut: could not find the language server kernaut-lsp (not on exec-path, not in ~/.cargo/bin).  %s"
                  kernaut-install-hint)))

(defun kernaut--json-object (alist)
  "ALIST of (STRING . VALUE) as a hash table (an empty one encodes as {})."
  (let ((h (make-hash-table :test #'equal)))
    (dolist (kv alist) (puthash (format "%s" (car kv)) (cdr kv) h))
    h))

(defun kernaut-initialization-options (&rest _)
  "The settings in the shape of the server's initializationOptions.
Wiki links come as file:// URIs of pages the server writes to its cache
folder, which `kernaut-diagnostic-page' and `browse-url' open."
  (let ((opts (list :arch kernaut-arch
                    :wikiLinks "file"
                    :wikiPaths (vconcat (mapcar #'expand-file-name kernaut-wiki-paths))
                    :rules (kernaut--json-object kernaut-rules)
                    :inlayHints (if kernaut-inlay-hints t :json-false)
                    :codeLens (if kernaut-code-lens t :json-false))))
    (when kernaut-default-block-size
      (setq opts (append opts (list :defaultBlockSize
                                    (if (listp kernaut-default-block-size)
                                        (vconcat kernaut-default-block-size)
                                      kernaut-default-block-size)))))
    opts))

;;;; Talking to the server, whichever client runs it

(defun kernaut--get (obj key)
  "KEY (a string) of a JSON object OBJ parsed as a plist, hash table or alist."
  (cond ((hash-table-p obj) (gethash key obj))
        ((and (consp obj) (keywordp (car obj))) (plist-get obj (intern (concat ":" key))))
        ((consp obj) (cdr (assoc key obj)))))

(defvar eglot--servers-by-project)
(declare-function eglot-current-server "eglot")
(declare-function jsonrpc-request "jsonrpc")
(declare-function jsonrpc-notify "jsonrpc")
(declare-function lsp-request "lsp-mode")
(declare-function lsp-workspaces "lsp-mode")
(declare-function lsp--set-configuration "lsp-mode")

(defun kernaut--eglot-servers ()
  "Every running kernaut eglot server, the current buffer's first."
  (when (boundp 'eglot--servers-by-project)
    (let ((all (apply #'append (hash-table-values eglot--servers-by-project)))
          (cur (and (fboundp 'eglot-current-server) (eglot-current-server))))
      (cl-remove-duplicates
       (cl-remove-if-not (lambda (s) (object-of-class-p s 'kernaut-eglot-server))
                         (if cur (cons cur all) all))))))

(defun kernaut--execute (command &rest arguments)
  "Run COMMAND with ARGUMENTS on kernaut-lsp and return its result.
Through eglot or lsp-mode, whichever runs it."
  (let ((args (vconcat arguments)))
    (cond
     ((kernaut--eglot-servers)
      (jsonrpc-request (car (kernaut--eglot-servers)) :workspace/executeCommand
                       (list :command command :arguments args)))
     ((and (bound-and-true-p lsp-mode) (lsp-workspaces))
      (lsp-request "workspace/executeCommand" (list :command command :arguments args)))
     (t (user-error "kernaut: no kernaut-lsp is running; open a .cu file first (M-x eglot or M-x lsp)")))))

(defun kernaut-push-settings ()
  "Send the current settings to every running kernaut-lsp."
  (interactive)
  (let ((params (list :settings (list :kernaut (kernaut-initialization-options)))))
    (dolist (s (kernaut--eglot-servers))
      (jsonrpc-notify s :workspace/didChangeConfiguration params))
    (when (and (bound-and-true-p lsp-mode) (fboundp 'lsp--set-configuration))
      (lsp--set-configuration (list :kernaut (kernaut-initialization-options))))))

;;;###autoload
(defun kernaut-set-arch (arch)
  "Set the target architecture to ARCH (\"sm_80\") and tell the running servers."
  (interactive (list (read-string (format "Target architecture (now %s): " kernaut-arch) nil nil kernaut-arch)))
  (setq kernaut-arch arch)
  (kernaut-push-settings)
  (message "kernaut: target architecture %s" arch))

;;;; Wiki pages

(defun kernaut--target (r)
  "The page target of a search result R."
  (or (kernaut--get r "target")
      (let ((anchor (kernaut--get r "anchor")))
        (if (and anchor (stringp anchor)) (format "%s#%s" (kernaut--get r "id") anchor)
          (kernaut--get r "id")))))

(defun kernaut--display-page (target page)
  "Show PAGE for TARGET in a read-only Markdown buffer.
PAGE is the result of kernaut.showPage."
  (let ((buf (get-buffer-create (format "*kernaut %s*" target)))
        (anchor (and (string-match "#\\(.+\\)\\'" target) (match-string 1 target))))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (or (kernaut--get page "markdown") ""))
        (cond ((fboundp 'gfm-view-mode) (gfm-view-mode))
              ((fboundp 'markdown-mode) (markdown-mode))
              (t (text-mode)))
        (goto-char (point-min))
        (when (and anchor (re-search-forward (format "^#+ +%s\\b" (regexp-quote anchor)) nil t))
          (beginning-of-line))
        (setq buffer-read-only t)))
    (display-buffer buf)
    buf))

;;;###autoload
(defun kernaut-show-page (target)
  "Show the wiki page TARGET (\"pitfall-bank-conflict#P1\" or an id)."
  (interactive "sWiki page (id#anchor): ")
  (kernaut--display-page target (kernaut--execute "kernaut.showPage" target)))

;;;###autoload
(defun kernaut-search (query)
  "Search the wiki's pitfalls for a symptom QUERY in your own words.
Show the page chosen among the results."
  (interactive "sSymptom: ")
  (let* ((results (append (kernaut--execute "kernaut.search" query 30) nil))
         (cands (mapcar (lambda (r)
                          (cons (format "%s  [%s]" (kernaut--get r "title") (kernaut--target r))
                                (kernaut--target r)))
                        results)))
    (if (null cands)
        (message "kernaut: nothing in the wiki matches %S" query)
      (let ((pick (completing-read (format "kernaut (%d pages): " (length cands)) cands nil t)))
        (kernaut-show-page (cdr (assoc pick cands)))))))

(defun kernaut--position ()
  "The LSP position of point (UTF-16 columns where eglot says how)."
  (list :line (1- (line-number-at-pos))
        :character (if (and (boundp 'eglot-current-column-function) (kernaut--eglot-servers))
                       (funcall eglot-current-column-function)
                     (- (point) (line-beginning-position)))))

;;;###autoload
(defun kernaut-symbol-page ()
  "Show the wiki page of the symbol at point."
  (interactive)
  (let* ((uri (concat "file://" (url-hexify-string (expand-file-name buffer-file-name) url-path-allowed-chars)))
         (page (kernaut--execute "kernaut.symbolPage" (list :uri uri :position (kernaut--position)))))
    (if page
        (kernaut--display-page (kernaut--get page "id") page)
      (message "kernaut: no wiki page for %s" (or (thing-at-point 'symbol t) "the symbol at point")))))

(defun kernaut--display-markdown (name markdown)
  "Show MARKDOWN in a read-only Markdown buffer called NAME; the buffer."
  (let ((buf (get-buffer-create name)))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (or markdown ""))
        (cond ((fboundp 'gfm-view-mode) (gfm-view-mode))
              ((fboundp 'markdown-mode) (markdown-mode))
              (t (text-mode)))
        (goto-char (point-min))
        (setq buffer-read-only t)))
    (display-buffer buf)
    buf))

(defun kernaut--goto-anchor (anchor)
  "Move to the heading of ANCHOR (\"## P1: ...\", or a heading whose slug it is)."
  (when (and anchor (not (string-empty-p anchor)))
    (goto-char (point-min))
    (unless (or (re-search-forward (format "^#+ +%s\\b" (regexp-quote anchor)) nil t)
                (cl-loop while (re-search-forward "^#+ +\\(.*\\)$" nil t)
                         when (string= (downcase anchor)
                                       (replace-regexp-in-string
                                        "[[:space:]]+" "-"
                                        (replace-regexp-in-string "[^[:alnum:][:space:]-]" ""
                                                                  (downcase (match-string 1)))))
                         return t))
      (goto-char (point-min)))
    (beginning-of-line)))

;;;###autoload
(defun kernaut-open-link (href)
  "Open the wiki link HREF.
A file:// page opens at its #anchor; kernaut://wiki/ID#ANCHOR through the server."
  (interactive "sWiki link: ")
  (cond
   ((string-match "\\`kernaut://wiki/\\(.+\\)\\'" href)
    (kernaut-show-page (match-string 1 href)))
   ((string-match "\\`file://\\([^#]*\\)\\(?:#\\(.*\\)\\)?\\'" href)
    (let ((file (url-unhex-string (match-string 1 href)))
          (anchor (match-string 2 href)))
      (with-current-buffer (find-file-noselect file)
        (when (fboundp 'gfm-view-mode) (gfm-view-mode))
        (setq buffer-read-only t)
        (kernaut--goto-anchor anchor)
        (let ((pos (point)))
          (set-window-point (display-buffer (current-buffer)) pos))
        (current-buffer))))
   (t (user-error "kernaut: not a wiki link: %s" href))))

(defun kernaut--diagnostic-href (diag)
  "The wiki link of the flymake diagnostic DIAG from kernaut-lsp, or nil."
  (let* ((data (flymake-diagnostic-data diag))
         (lsp (or (cdr-safe (assoc 'eglot-lsp-diag data))
                  (and (listp data) (plist-member data :codeDescription) data)))
         (desc (and lsp (plist-get lsp :codeDescription))))
    (and desc (plist-get desc :href))))

(declare-function flymake-diagnostics "flymake")
(declare-function flymake-diagnostic-data "flymake")

;;;###autoload
(defun kernaut-diagnostic-page ()
  "Open the wiki section that the kernaut diagnostic at point cites."
  (interactive)
  (let ((href (cl-some #'kernaut--diagnostic-href
                       (append (flymake-diagnostics (point))
                               (flymake-diagnostics (line-beginning-position) (line-end-position))))))
    (if href
        (kernaut-open-link href)
      (message "kernaut: no kernaut diagnostic with a wiki link here"))))

(defun kernaut--buffer-uri ()
  "The file:// URI of the current buffer's file."
  (concat "file://" (url-hexify-string (expand-file-name buffer-file-name) url-path-allowed-chars)))

(defun kernaut--request (method params)
  "Send the request METHOD with PARAMS to kernaut-lsp (eglot or lsp-mode)."
  (cond
   ((kernaut--eglot-servers)
    (jsonrpc-request (car (kernaut--eglot-servers)) (intern (concat ":" method)) params))
   ((and (bound-and-true-p lsp-mode) (lsp-workspaces))
    (lsp-request method params))
   (t (user-error "kernaut: no kernaut-lsp is running; open a .cu file first (M-x eglot or M-x lsp)"))))

(defun kernaut--show-report (report)
  "Show REPORT, the result of kernaut.kernelReport, in a Markdown buffer."
  (when report
    (kernaut--display-markdown (format "*kernaut report %s*" (kernaut--get report "kernel"))
                               (kernaut--get report "markdown"))))

;;;###autoload
(defun kernaut-kernel-report ()
  "Show the kernel report of the kernel at (or above) point.
It runs the server's \"report\" code lens of that kernel."
  (interactive)
  (let* ((line (1- (line-number-at-pos)))
         (lenses (append (kernaut--request "textDocument/codeLens"
                                           (list :textDocument (list :uri (kernaut--buffer-uri))))
                         nil))
         (reports (cl-remove-if-not
                   (lambda (l) (equal (kernaut--get (kernaut--get l "command") "command") "kernaut.kernelReport"))
                   lenses))
         (start (lambda (l) (kernaut--get (kernaut--get (kernaut--get l "range") "start") "line")))
         (above (cl-remove-if-not (lambda (l) (<= (funcall start l) line)) reports))
         (lens (or (car (last (cl-sort (copy-sequence above) #'< :key start))) (car reports))))
    (if (not lens)
        (message "kernaut: no kernel in this file to report on")
      (kernaut--show-report
       (apply #'kernaut--execute "kernaut.kernelReport"
              (append (kernaut--get (kernaut--get lens "command") "arguments") nil))))))

;;;###autoload
(defun kernaut-doctor ()
  "Show what kernaut-lsp uses for this folder, and why."
  (interactive)
  (let* ((root (or (and (fboundp 'project-current) (project-current)
                        (fboundp 'project-root) (project-root (project-current)))
                   default-directory))
         (report (kernaut--execute "kernaut.doctor" (directory-file-name (expand-file-name root)))))
    (when report
      (kernaut--display-markdown "*kernaut doctor*" (kernaut--get report "markdown")))))

;;;; eglot

(defvar eglot-server-programs)
(defvar eglot-connect-hook)

(with-eval-after-load 'eglot
  (defclass kernaut-eglot-server (eglot-lsp-server) ()
    :documentation "kernaut-lsp, the CUDA kernel-optimization wiki's language server.")

  (cl-defmethod eglot-initialization-options ((_server kernaut-eglot-server))
    (kernaut-initialization-options))

  ;; Code actions carry kernaut.showPage: show the page the server returns.
  (cl-defmethod eglot-execute-command ((_server kernaut-eglot-server) command arguments)
    (let ((result (cl-call-next-method)))
      (when (and result (equal (format "%s" command) "kernaut.showPage"))
        (kernaut--display-page (aref arguments 0) result))
      ;; The "report" lens: the kernel report in a Markdown buffer.
      (when (and result (equal (format "%s" command) "kernaut.kernelReport"))
        (kernaut--show-report result))
      result)))

(defun kernaut--eglot-contact (&rest _)
  "The eglot contact for kernaut-lsp."
  (cons 'kernaut-eglot-server (kernaut--server-command)))

(defun kernaut--eglot-connected (server)
  "Send the settings to SERVER once it is up."
  (when (object-of-class-p server 'kernaut-eglot-server)
    (jsonrpc-notify server :workspace/didChangeConfiguration
                    (list :settings (list :kernaut (kernaut-initialization-options))))))

;;;###autoload
(defun kernaut-eglot-setup (&optional no-ensure)
  "Register kernaut-lsp with eglot for `kernaut-modes'.
Unless NO-ENSURE, also start it in every CUDA buffer (`eglot-ensure')."
  (require 'eglot)
  (setq eglot-server-programs
        (cons (cons kernaut-modes #'kernaut--eglot-contact)
              (cl-remove-if (lambda (e) (equal (car e) kernaut-modes)) eglot-server-programs)))
  (add-hook 'eglot-connect-hook #'kernaut--eglot-connected)
  (unless no-ensure
    (dolist (m kernaut-modes)
      (add-hook (intern (format "%s-hook" m)) #'eglot-ensure))))

;;;; lsp-mode

(defvar lsp-language-id-configuration)
(defvar lsp--cur-workspace)
(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")

(defun kernaut--lsp-kernel-report-action (action)
  "lsp-mode handler for the kernaut.kernelReport command ACTION (the report lens)."
  (let* ((arg (aref (vconcat (kernaut--get action "arguments")) 0))
         (result (kernaut--execute "kernaut.kernelReport" arg)))
    (kernaut--show-report result)))

(defun kernaut--lsp-show-page-action (action)
  "lsp-mode handler for the kernaut.showPage command ACTION."
  (let ((target (aref (vconcat (kernaut--get action "arguments")) 0)))
    (kernaut-show-page target)))

;;;###autoload
(defun kernaut-lsp-mode-setup ()
  "Register kernaut-lsp with lsp-mode, as an add-on beside clangd in CUDA buffers."
  (require 'lsp-mode)
  (dolist (m kernaut-modes)
    (add-to-list 'lsp-language-id-configuration (cons m "cuda")))
  (let ((handlers (make-hash-table :test #'equal)))
    (puthash "kernaut.showPage" #'kernaut--lsp-show-page-action handlers)
    (puthash "kernaut.kernelReport" #'kernaut--lsp-kernel-report-action handlers)
    (lsp-register-client
     (make-lsp-client
      :new-connection (lsp-stdio-connection #'kernaut--server-command)
      :major-modes kernaut-modes
      :server-id 'kernaut
      :add-on? t
      :priority -2
      :initialization-options #'kernaut-initialization-options
      :initialized-fn (lambda (workspace)
                        (let ((lsp--cur-workspace workspace))
                          (lsp--set-configuration (list :kernaut (kernaut-initialization-options)))))
      :action-handlers handlers))))

(provide 'kernaut)
;;; kernaut.el ends here
