;;; test-lsp-mode.el --- Batch test of pi-snippets-lsp in Emacs lsp-mode  -*- lexical-binding: t; -*-

;;; Commentary:

;; lsp-mode is a client this project does not target with a package of its
;; own: the server is registered exactly as lsp-mode's documentation says
;; ("Adding support for languages": `lsp-register-client' with
;; `make-lsp-client', `lsp-stdio-connection' and `lsp-activate-on'), nothing
;; more, as a new user would.  Then, in a Markdown buffer with yasnippet on
;; (lsp-mode's default snippet engine):
;;
;; - `%' completion through `completion-at-point' (`lsp-completion-at-point')
;;   leaves exactly the configured text, a multi-line value with $HOME, a
;;   backtick, a tab and a closing brace, on an indented list line and at the
;;   end of a file without a final newline;
;; - the server sends no notification lsp-mode does not know (it warns about
;;   those on every load);
;; - an edit of the user settings file, which lies outside the workspace
;;   folder, is seen: lsp-mode accepts the server's file watchers but watches
;;   only inside its workspace folders.
;;
;;   emacs --batch -Q -l tests/editors/emacs/test-lsp-mode.el
;;
;; Environment: PI_SNIPPETS_SERVER (server command, split on whitespace,
;; default "pi-snippets-lsp"), PI_SNIPPETS_TEST_TIMEOUT (seconds, default 90),
;; PI_SNIPPETS_TEST_DUMP (print the lsp-mode I/O log even on success).
;; Exit code 0 when everything passes, 1 on a failure, 2 on the time limit.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'json)

;; What a user's Emacs does at start-up (skipped by -Q): activate the
;; installed packages, autoloads included (lsp-mode hooks its completion in
;; through them).  Debian's site start-up puts its elpa-* packages in
;; `package-directory-list'.
(require 'package)
(setq package-user-dir (make-temp-file "pi-snippets-elpa-" t)
      package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
(package-initialize)

(defvar pi-test--timeout
  (string-to-number (or (getenv "PI_SNIPPETS_TEST_TIMEOUT") "90")))
(defvar pi-test--tmp (make-temp-file "pi-snippets-lsp-mode-" t))
(defvar pi-test--failures 0)
(defvar pi-test--checks 0)

(defconst pi-test--rev "Review $HOME:\n\tuse `x` }\n  end ${1:y}"
  "A multi-line value with $HOME, a backtick, a tab and a closing brace.")

(defun pi-test--log (fmt &rest args)
  "Print FMT with ARGS on stderr with a prefix."
  (message "[test-lsp-mode] %s" (apply #'format fmt args)))

(defun pi-test--dump ()
  "Print the lsp-mode log buffers."
  (dolist (buffer (buffer-list))
    (when (string-match-p "\\*lsp-log\\|pi-snippets\\|\\*Warnings\\*" (buffer-name buffer))
      (with-current-buffer buffer
        (pi-test--log "---- %s (last 6000 chars) ----\n%s" (buffer-name)
                      (buffer-substring-no-properties
                       (max (point-min) (- (point-max) 6000)) (point-max)))))))

(defun pi-test--finish (code)
  "Stop the servers, clean up and exit Emacs with CODE."
  (when (or (/= code 0) (getenv "PI_SNIPPETS_TEST_DUMP"))
    (pi-test--dump))
  (ignore-errors (with-timeout (5) (lsp-workspace-shutdown (car (lsp-workspaces)))))
  (ignore-errors (delete-directory pi-test--tmp t))
  (pi-test--log "%d check(s), %d failure(s): %s" pi-test--checks pi-test--failures
                (if (= code 0) "PASS" "FAIL"))
  (kill-emacs code))

(defun pi-test--check (ok what &rest details)
  "Record check WHAT, passed when OK; DETAILS (format and args) explain a failure."
  (cl-incf pi-test--checks)
  (if ok
      (pi-test--log "ok   %s" what)
    (cl-incf pi-test--failures)
    (pi-test--log "FAIL %s%s" what (if details (concat ": " (apply #'format details)) "")))
  ok)

(defun pi-test--require (ok what &rest details)
  "Like `pi-test--check' (OK, WHAT, DETAILS), but stop on failure."
  (unless (apply #'pi-test--check ok what details)
    (pi-test--finish 1)))

(defun pi-test--wait (predicate seconds)
  "Process events until PREDICATE is non-nil or SECONDS pass; return its value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(defun pi-test--write-file (file text)
  "Write TEXT to FILE as UTF-8, without adding a final newline."
  (make-directory (file-name-directory file) t)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region text nil file nil 'silent)))

(defun pi-test--read-file (file)
  "FILE's contents as a string."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (buffer-string)))

(defun pi-test--settings (snippets)
  "Settings JSON with expandOnCompletion and SNIPPETS (an alist)."
  (json-encode `((piSimpleSnippets . ((expandOnCompletion . t) (snippets . ,snippets))))))

(defun pi-test--complete ()
  "Complete at point with company, lsp-mode's completion front end, and
accept the first candidate, as pressing RET in the popup does."
  (company-mode 1)
  (with-timeout (20 (pi-test--log "company timed out"))
    (company-manual-begin)
    (pi-test--log "company candidates: %S" (mapcar #'substring-no-properties company-candidates))
    (when company-candidates
      (company-complete-selection))))

(defun pi-test--snippet-names ()
  "Names from `snippets/list', asked through lsp-mode."
  (let ((result (lsp-request "snippets/list" (make-hash-table))))
    (mapcar (lambda (s) (gethash "name" s)) (gethash "snippets" result))))

(defun pi-test--main ()
  "Run every check."
  (let* ((agent (expand-file-name "agent" pi-test--tmp))
         (settings (expand-file-name "settings.json" agent))
         (project (file-name-as-directory (expand-file-name "project" pi-test--tmp)))
         (command (split-string (or (getenv "PI_SNIPPETS_SERVER") "pi-snippets-lsp"))))
    (pi-test--write-file settings (pi-test--settings `((rev . ,pi-test--rev))))
    (make-directory (expand-file-name ".git" project) t)
    (setenv "PI_CODING_AGENT_DIR" agent)

    (require 'markdown-mode)
    (require 'company)
    (require 'yasnippet)
    (yas-global-mode 1)
    (require 'lsp-mode)
    (setq lsp-session-file (expand-file-name "lsp-session" pi-test--tmp)
          lsp-auto-guess-root t            ; no question about the project root
          lsp-restart 'ignore
          lsp-log-io t
          lsp-enable-suggest-server-download nil)

    ;; The registration, as lsp-mode's "Adding support for languages" shows it.
    (lsp-register-client
     (make-lsp-client :new-connection (lsp-stdio-connection command)
                      :activation-fn (lsp-activate-on "markdown")
                      :server-id 'pi-snippets))
    (add-hook 'markdown-mode-hook #'lsp)

    (pi-test--log "lsp-mode from %s, server %S" (locate-library "lsp-mode") command)
    (let ((buffer (find-file-noselect (expand-file-name "list.md" project))))
      (set-buffer buffer)
      (pi-test--check (eq major-mode 'markdown-mode) "list.md is in markdown-mode")
      (pi-test--require
       (pi-test--wait (lambda ()
                        (with-current-buffer buffer
                          (--some (eq (lsp--workspace-status it) 'initialized)
                                  (lsp-workspaces))))
                      30)
       "lsp-mode started pi-snippets-lsp")
      (pi-test--require (pi-test--wait (lambda () (pi-test--snippet-names)) 10)
                        "the first generation is loaded")

      ;; Completion on an indented Markdown list item.
      (goto-char (point-max))
      (insert "  - %rev")
      (pi-test--complete)
      (pi-test--check (equal (buffer-string) (concat "  - " pi-test--rev))
                      "indented list line: exactly the configured text"
                      "buffer: %S" (buffer-string))
      (pi-test--check (= (point) (point-max)) "indented list line: point after the text")
      (set-buffer-modified-p nil)

      ;; Completion at the end of a file without a final newline.
      (let ((file (expand-file-name "noeol.md" project)))
        (pi-test--write-file file "intro\nsee ")
        (set-buffer (find-file-noselect file))
        (pi-test--require (pi-test--wait (lambda () (bound-and-true-p lsp-completion-mode)) 10)
                          "the second buffer joins the workspace")
        (goto-char (point-max))
        (insert "%rev")
        (pi-test--complete)
        (let ((require-final-newline nil))
          (save-buffer))
        (pi-test--check (equal (pi-test--read-file file) (concat "intro\nsee " pi-test--rev))
                        "end of a file without a final newline: exactly the configured text"
                        "file: %S" (pi-test--read-file file)))

      ;; The user settings file lies outside the workspace folder; lsp-mode took
      ;; the watcher registration but does not watch there.
      (pi-test--check (not (string-prefix-p project settings))
                      "the settings file is outside the workspace folder")
      (pi-test--check (lsp--registered-capability "workspace/didChangeWatchedFiles")
                      "lsp-mode took the server's file watcher registration")
      (pi-test--write-file settings (pi-test--settings `((rev . ,pi-test--rev)
                                                         (fresh . "Just added."))))
      (pi-test--check (pi-test--wait (lambda () (member "fresh" (pi-test--snippet-names))) 15)
                      "an edit of the settings file is seen live")

      ;; Nothing lsp-mode would warn about as an unknown notification.
      (let ((warnings (with-current-buffer (get-buffer-create "*Warnings*") (buffer-string)))
            (messages (with-current-buffer (messages-buffer) (buffer-string))))
        (pi-test--check (not (string-match-p "Unknown notification" (concat warnings messages)))
                        "no unknown-notification warning"
                        "%s" (concat warnings messages))))
    (pi-test--finish (if (= pi-test--failures 0) 0 1))))

(run-at-time pi-test--timeout nil
             (lambda ()
               (pi-test--log "overall timeout of %s s reached" pi-test--timeout)
               (pi-test--dump)
               (kill-emacs 2)))

(condition-case err
    (pi-test--main)
  (error
   (pi-test--log "ERROR: %s" (error-message-string err))
   (pi-test--finish 1)))

;;; test-lsp-mode.el ends here
