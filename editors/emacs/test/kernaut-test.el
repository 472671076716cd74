;;; kernaut-test.el --- batch test of kernaut.el with eglot  -*- lexical-binding: t; -*-
;; Run by run.sh: emacs --batch -l kernaut-test.el.  Opens a .cu file with eglot and
;; kernaut-lsp ($KERNAUT_LSP), checks hover on __hfma2, the bank-conflict diagnostic,
;; applies the quick fix through `eglot-code-actions', runs `kernaut-search' and
;; `kernaut-symbol-page'.

(require 'package)
(package-initialize)
(require 'cl-lib)
(require 'eglot)
(add-to-list 'load-path (expand-file-name ".." (file-name-directory load-file-name)))
(require 'kernaut)

(defvar kt-passed 0)
(defvar kt-failed 0)
(defun kt-check (name ok &optional detail)
  (if ok
      (progn (cl-incf kt-passed) (princ (format "ok - %s\n" name)))
    (cl-incf kt-failed)
    (princ (format "not ok - %s\n  %s\n" name (or detail ""))))
  ok)

(defun kt-wait (pred &optional secs)
  "Wait up to SECS (20) seconds for PRED, processing server output."
  (let ((end (+ (float-time) (or secs 20))) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) end))
      (accept-process-output nil 0.05))
    v))

;; On a failure: every message of the events buffer, one line each (its header and the
;; first 160 characters of its body), so that a publication that never came, or came
;; empty, shows in the CI log.
(defun kt-event-summary (server)
  (let ((ev (jsonrpc-events-buffer server)) (out nil))
    (if (not (buffer-live-p ev))
        "(no events buffer)"
      (with-current-buffer ev
        (save-excursion
          (goto-char (point-min))
          (while (re-search-forward "^\\[[a-z-]+\\].*$" nil t)
            (let ((header (match-string 0))
                  (body (buffer-substring (min (point-max) (1+ (point)))
                                          (min (point-max) (+ (point) 161)))))
              (push (format "    %s %s" header (replace-regexp-in-string "\n" " " body)) out)))))
      (mapconcat #'identity (nreverse out) "\n"))))

(defun kt-finish ()
  (princ (format "%d passed, %d failed\n" kt-passed kt-failed))
  (kill-emacs (if (zerop kt-failed) 0 1)))

(condition-case err
    (let* ((file (getenv "KERNAUT_TEST_FILE"))
           (kernaut-server-command (list (getenv "KERNAUT_LSP")))
           (kernaut-arch "sm_80")
           (eglot-sync-connect t)
           (eglot-connect-timeout 30))
      (kt-check "a missing server is reported with the install command"
                (let ((kernaut-server-command '("/nonexistent/kernaut-lsp")))
                  (condition-case e (progn (kernaut--server-command) nil)
                    (user-error (string-match-p "cargo install --path lsp" (cadr e))))))
      (kernaut-eglot-setup t)
      (find-file file)
      (kt-check "a .cu file opens in a CUDA mode" (memq major-mode kernaut-modes) major-mode)
      (call-interactively #'eglot)
      (let ((server (kt-wait (lambda () (eglot-current-server)) 30)))
        (kt-check "eglot connects to kernaut-lsp" (and server (object-of-class-p server 'kernaut-eglot-server)))
        ;; Hover on __hfma2.
        (goto-char (point-min))
        (search-forward "__hfma2(")
        (backward-char 3)
        (let* ((hover (jsonrpc-request server :textDocument/hover
                                       (list :textDocument (list :uri (eglot--path-to-uri buffer-file-name))
                                             :position (kernaut--position))))
               (contents (plist-get hover :contents))
               (text (if (stringp contents) contents (format "%s" (or (plist-get contents :value) contents)))))
          (kt-check "hover on __hfma2 names it" (string-match-p "__hfma2" text) text)
          (kt-check "hover shows the required architecture" (string-match-p "sm_53" text) text)
          (kt-check "hover reflects kernaut-arch (sm_80)" (string-match-p "sm_80" text) text))
        ;; The page of the symbol at point.
        (kernaut-symbol-page)
        (kt-check "kernaut-symbol-page shows the page of __hfma2"
                  (let ((b (get-buffer "*kernaut api-fp16-arithmetic*")))
                    (and b (with-current-buffer b (string-match-p "__hfma2" (buffer-string))))))
        ;; Diagnostics in flymake, then the quick fix through eglot-code-actions.
        ;; Flymake starts a check on its own only after a command or a redisplay, which a
        ;; batch Emacs may not give it: start one each second while waiting, as the next
        ;; keystroke would in an editor. Each look is made in the .cu file's buffer: the
        ;; page shown in the only window of a batch Emacs may have become current.
        (set-buffer (find-buffer-visiting file))
        (let* ((tick 0)
               (diags (kt-wait (lambda ()
                                 (with-current-buffer (find-buffer-visiting file)
                                   (when (zerop (% (cl-incf tick) 20)) (flymake-start))
                                   (cl-remove-if-not (lambda (d) (string-match-p "bank conflict" (flymake-diagnostic-text d)))
                                                     (flymake-diagnostics))))
                               60)))
          (kt-check "bank-conflict diagnostic reaches flymake" diags
                    ;; On failure: what flymake holds, what eglot received from the server,
                    ;; and the tail of the protocol log.
                    (with-current-buffer (or (find-buffer-visiting file) (current-buffer))
                      (format "buffer: %s\n  flymake: %S\n  flymake-mode %S, eglot managed %S, backends running %S reporting %S disabled %S\n  eglot received: %S\n  messages exchanged:\n%s"
                              (buffer-name)
                              (flymake-diagnostics)
                              flymake-mode
                              (bound-and-true-p eglot--managed-mode)
                              (flymake-running-backends)
                              (flymake-reporting-backends)
                              (flymake-disabled-backends)
                              (and (boundp 'eglot--diagnostics) eglot--diagnostics)
                              (kt-event-summary server))))
          ;; Its wiki link is a file:// page (written by the server to its cache folder),
          ;; which `kernaut-diagnostic-page' opens at the cited section.
          (when diags
            (let* ((href (kernaut--diagnostic-href (car diags)))
                   (anchor (and href (string-match "#\\(.+\\)\\'" href) (match-string 1 href)))
                   (src (current-buffer)))
              (kt-check "the diagnostic links to a file:// page with an anchor"
                        (and href (string-match-p "\\`file://.+\\.md#.+\\'" href)) href)
              (goto-char (flymake-diagnostic-beg (car diags)))
              (let ((page (kernaut-diagnostic-page)))
                (kt-check "kernaut-diagnostic-page visits the linked page file"
                          (and (bufferp page)
                               (string-match-p "pitfall-bank-conflict\\.md\\'" (or (buffer-file-name page) "")))
                          page)
                (when (bufferp page)
                  (with-current-buffer page
                    (kt-check (format "kernaut-diagnostic-page is at the cited section (%s)" anchor)
                              (string-match-p (format "^#+ +%s\\b" (regexp-quote (or anchor "?")))
                                              (buffer-substring (line-beginning-position) (line-end-position)))
                              (buffer-substring (line-beginning-position) (line-end-position))))))
              ;; Emacs itself opens such a link too (`browse-url' hands file:// links of
              ;; non-HTML files to Emacs), as markdown-mode does when a link is followed.
              (save-window-excursion
                (browse-url href)
                (kt-check "browse-url opens the file:// link in Emacs"
                          (string-match-p "pitfall-bank-conflict" (buffer-name))
                          (buffer-name)))
              (switch-to-buffer src)))
          (when diags
            (goto-char (flymake-diagnostic-beg (car diags)))
            (let (offered)
              (cl-letf (((symbol-function 'completing-read)
                         (lambda (_prompt coll &rest _)
                           (setq offered (mapcar (lambda (c) (if (consp c) (car c) c)) coll))
                           (cl-find-if (lambda (c) (string-match-p "Pad the rows" c)) offered))))
                ;; Interactive, as M-x eglot-code-actions; a non-list last event picks the
                ;; completing-read menu rather than a popup menu.
                (let ((last-nonmenu-event ?\r))
                  (call-interactively #'eglot-code-actions)))
              (princ (format "# code actions offered: %S\n" offered))
              (kt-check "quick fix applied (tile[32][32] -> tile[32][33])"
                        (kt-wait (lambda () (save-excursion (goto-char (point-min)) (search-forward "tile[32][33]" nil t))) 10)
                        (buffer-string)))))
        ;; Search by symptom.
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (_prompt coll &rest _)
                     (cl-find-if (lambda (c) (string-match-p "pitfall-async-copy" c))
                                 (mapcar (lambda (c) (if (consp c) (car c) c)) coll)))))
          (kernaut-search "my async-copy version is slower than the plain loop"))
        (kt-check "kernaut-search shows the chosen page"
                  (let ((b (cl-find-if (lambda (b) (string-prefix-p "*kernaut pitfall-async-copy" (buffer-name b)))
                                     (buffer-list))))
                    (and b (with-current-buffer b (let ((case-fold-search t)) (string-match-p "async" (buffer-string)))))))
        ;; The kernel report of the kernel at point, in a Markdown buffer.
        (goto-char (point-min))
        (search-forward "tile[threadIdx.y]")
        (kernaut-kernel-report)
        (let ((b (get-buffer "*kernaut report transpose*")))
          (kt-check "kernaut-kernel-report shows the report of the kernel at point"
                    (and b (with-current-buffer b
                             (string-match-p "^# Kernel report: `transpose` on sm_80" (buffer-string))))
                    (and b (with-current-buffer b (buffer-string))))
          (kt-check "the report has its ranked costs"
                    (and b (with-current-buffer b (string-match-p "^## Costs, ranked" (buffer-string)))))
          (when b (kill-buffer b)))
        ;; The "report" lens, run as eglot runs a lens's command.
        (let* ((lenses (append (jsonrpc-request server :textDocument/codeLens
                                                (list :textDocument (list :uri (eglot--path-to-uri buffer-file-name))))
                               nil))
               (lens (cl-find-if (lambda (l)
                                   (and (equal (plist-get (plist-get l :command) :command) "kernaut.kernelReport")
                                        (string-match-p "transpose" (format "%S" (plist-get (plist-get l :command) :arguments)))))
                                 lenses)))
          (kt-check "a report lens above transpose" lens lenses)
          (when lens
            (eglot-execute-command server "kernaut.kernelReport" (plist-get (plist-get lens :command) :arguments))
            (kt-check "running the report lens's command shows the report"
                      (let ((b (get-buffer "*kernaut report transpose*")))
                        (and b (with-current-buffer b (string-match-p "Kernel report" (buffer-string))))))))
        ;; The doctor, in a Markdown buffer.
        (kernaut-doctor)
        (let ((b (get-buffer "*kernaut doctor*")))
          (kt-check "kernaut-doctor shows the doctor's report"
                    (and b (with-current-buffer b (string-match-p "^# kernaut doctor" (buffer-string))))
                    (and b (with-current-buffer b (buffer-string))))
          (kt-check "the doctor names the file's target and why (the arch setting)"
                    (and b (with-current-buffer b
                             (string-match-p "hover\\.cu: sm_80 (the kernaut\\.arch setting" (buffer-string))))
                    (and b (with-current-buffer b (buffer-string)))))
        ;; Settings pushed on change.
        (kernaut-set-arch "sm_75")
        (let* ((hover (jsonrpc-request server :textDocument/hover
                                       (list :textDocument (list :uri (eglot--path-to-uri buffer-file-name))
                                             :position (progn (goto-char (point-min)) (search-forward "__hfma2(")
                                                              (backward-char 3) (kernaut--position)))))
               (contents (plist-get hover :contents)))
          (kt-check "kernaut-set-arch reaches the server (hover says sm_75)"
                    (string-match-p "sm_75" (format "%s" (plist-get contents :value)))
                    contents))
        (ignore-errors (eglot-shutdown server))))
  (error (kt-check "test ran without error" nil (format "%S" err))))
(kt-finish)
