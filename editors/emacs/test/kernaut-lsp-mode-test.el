;;; kernaut-lsp-mode-test.el --- batch test of kernaut.el with lsp-mode  -*- lexical-binding: t; -*-
;; Run by run.sh when lsp-mode is installed (Debian: elpa-lsp-mode).  Registers the
;; client, opens the .cu file with lsp-mode and checks hover, the quick fix and search.

(require 'package)
(package-initialize)
(require 'cl-lib)
(add-to-list 'load-path (expand-file-name ".." (file-name-directory load-file-name)))
(require 'kernaut)

(defvar kt-passed 0)
(defvar kt-failed 0)
(defun kt-check (name ok &optional detail)
  (if ok
      (progn (cl-incf kt-passed) (princ (format "ok - lsp-mode: %s\n" name)))
    (cl-incf kt-failed)
    (princ (format "not ok - lsp-mode: %s\n  %s\n" name (or detail ""))))
  ok)
(defun kt-wait (pred &optional secs)
  (let ((end (+ (float-time) (or secs 20))) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) end))
      (accept-process-output nil 0.05))
    v))

(condition-case err
    (progn
      (require 'lsp-mode)
      (setq kernaut-server-command (list (getenv "KERNAUT_LSP"))
            kernaut-arch "sm_80"
            lsp-auto-guess-root t
            lsp-guess-root-without-session t
            lsp-session-file (expand-file-name "lsp-session" (getenv "HOME"))
            lsp-enable-suggest-server-download nil
            lsp-keep-workspace-alive nil
            lsp-log-io nil
            lsp-restart 'ignore
            lsp-enabled-clients '(kernaut))
      (kernaut-lsp-mode-setup)
      (kt-check "client registered" (gethash 'kernaut lsp-clients))
      (find-file (getenv "KERNAUT_TEST_FILE"))
      (lsp)
      (kt-check "lsp-mode starts kernaut-lsp"
                (kt-wait (lambda () (and (lsp-workspaces)
                                         (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized)))
                         30))
      (goto-char (point-min))
      (search-forward "__hfma2(")
      (backward-char 3)
      (let* ((hover (lsp-request "textDocument/hover" (lsp--text-document-position-params)))
             (text (format "%S" hover)))
        (kt-check "hover on __hfma2 names it, with sm_80 from the settings"
                  (and (string-match-p "__hfma2" text) (string-match-p "sm_80" text)) text))
      (let ((actions nil))
        (goto-char (point-min))
        (search-forward "= tile[threadIdx.x]")
        (kt-wait (lambda () (> (hash-table-count (lsp-diagnostics)) 0)) 20)
        (setq actions (lsp-code-actions-at-point))
        (kt-check "quick fix offered" actions (format "%S" actions))
        (let ((fix (cl-find-if (lambda (a) (string-match-p "Pad the rows" (lsp:code-action-title a))) actions)))
          (when fix (lsp-execute-code-action fix))
          (kt-check "quick fix applied (tile[32][33])"
                    (save-excursion (goto-char (point-min)) (search-forward "tile[32][33]" nil t)))))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_p coll &rest _)
                   (cl-find-if (lambda (c) (string-match-p "pitfall-async-copy" c))
                               (mapcar (lambda (c) (if (consp c) (car c) c)) coll)))))
        (kernaut-search "my async-copy version is slower than the plain loop"))
      (kt-check "kernaut-search shows the chosen page"
                (let ((b (cl-find-if (lambda (b) (string-prefix-p "*kernaut pitfall-async-copy" (buffer-name b)))
                                     (buffer-list))))
                  (and b (with-current-buffer b (let ((case-fold-search t)) (string-match-p "async" (buffer-string)))))))
      )
  (error (kt-check "test ran without error" nil (format "%S" err))))
(princ (format "%d passed, %d failed\n" kt-passed kt-failed))
(kill-emacs (if (zerop kt-failed) 0 1))
