;;; test-eglot-manage.el --- Batch test: managing snippets through Eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from anywhere:
;;
;;   emacs --batch -Q -l tests/editors/emacs/test-eglot-manage.el
;;
;; Environment: PI_SNIPPETS_SERVER (server command, split on whitespace;
;; default "pi-snippets-lsp"), PI_SNIPPETS_TEST_TIMEOUT (seconds, default 90).
;;
;; A prompt with markers of %review and the typo %reveiw: the typo's hint
;; reaches Flymake, xref finds the references (the key and the uses) and the
;; snippets by name (`xref-backend-apropos', workspace/symbol), and
;; `eglot-rename' renames the key in the settings file (left unsaved) and every
;; marker Pi would expand, not x%review nor the escape.  Exit code 0 when every
;; check passes, 1 on a failure, 2 when the time limit is hit.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(defvar pi-test--root
  (expand-file-name "../../.." (file-name-directory (or load-file-name buffer-file-name)))
  "Repository root.")

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (when (file-directory-p dir)
    (add-to-list 'load-path dir)))
(add-to-list 'load-path (expand-file-name "editors/emacs" pi-test--root))

(defvar pi-test--timeout
  (string-to-number (or (getenv "PI_SNIPPETS_TEST_TIMEOUT") "90")))
(defvar pi-test--tmp nil)
(defvar pi-test--server nil)
(defvar pi-test--failures 0)
(defvar pi-test--checks 0)

(defconst pi-test--settings
  (concat "{\n  \"piSimpleSnippets\": {\n    \"snippets\": {\n"
          "      \"review\": \"Review this change\",\n"
          "      \"rebase\": \"Rebase it on main\"\n    }\n  }\n}\n"))
(defconst pi-test--prompt "please %review and (%review).\nx%review %%review %reveiw\n")

(defun pi-test--log (fmt &rest args)
  "Print FMT with ARGS on stderr with a prefix."
  (message "[test-eglot-manage] %s" (apply #'format fmt args)))

(defun pi-test--finish (code)
  "Shut the server down, clean up and exit Emacs with CODE."
  (when (/= code 0)
    (dolist (buffer (buffer-list))
      (when (string-match-p "EGLOT.*\\(events\\|stderr\\)" (buffer-name buffer))
        (with-current-buffer buffer
          (pi-test--log "---- %s ----\n%s" (buffer-name)
                        (buffer-substring-no-properties
                         (max (point-min) (- (point-max) 6000)) (point-max)))))))
  (when (and pi-test--server (jsonrpc-running-p pi-test--server))
    (ignore-errors
      (with-timeout (5 (pi-test--log "shutdown timed out"))
        (eglot-shutdown pi-test--server nil 3))))
  (when (and pi-test--tmp (file-directory-p pi-test--tmp))
    (ignore-errors (delete-directory pi-test--tmp t)))
  (pi-test--log "%d check(s), %d failure(s): %s" pi-test--checks pi-test--failures
                (if (= code 0) "PASS" "FAIL"))
  (kill-emacs code))

(defun pi-test--check (ok what &rest details)
  "Record a check named WHAT; OK non-nil means it passed (DETAILS explain a failure)."
  (cl-incf pi-test--checks)
  (if ok
      (pi-test--log "ok   %s" what)
    (cl-incf pi-test--failures)
    (pi-test--log "FAIL %s%s" what (if details (concat ": " (apply #'format details)) "")))
  ok)

(defun pi-test--require (ok what &rest details)
  "Like `pi-test--check' (OK, WHAT, DETAILS) but stop everything on failure."
  (unless (apply #'pi-test--check ok what details)
    (pi-test--finish 1)))

(defun pi-test--wait (predicate seconds)
  "Process events until PREDICATE returns non-nil or SECONDS pass; its value."
  (let ((deadline (+ (float-time) seconds))
        value)
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(defun pi-test--write-file (file text)
  "Write TEXT to FILE as UTF-8."
  (make-directory (file-name-directory file) t)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region text nil file nil 'silent)))

(defun pi-test--main ()
  "Run every check."
  (require 'eglot)
  (require 'pi-snippets)
  (require 'xref)
  (pi-test--log "Emacs %s, eglot from %s" emacs-version (locate-library "eglot"))
  (setq pi-test--tmp (make-temp-file "pi-snippets-emacs-manage-" t))
  (let* ((agent-dir (expand-file-name "agent" pi-test--tmp))
         (settings (expand-file-name "settings.json" agent-dir))
         (project (expand-file-name "project/" pi-test--tmp))
         (file (expand-file-name "prompt.txt" project))
         (command (split-string (or (getenv "PI_SNIPPETS_SERVER") "pi-snippets-lsp")))
         buffer)
    (pi-test--write-file settings pi-test--settings)
    (pi-test--write-file file pi-test--prompt)
    (setenv "PI_CODING_AGENT_DIR" agent-dir)
    (setq pi-snippets-server-command command
          eglot-sync-connect t
          eglot-connect-timeout 30
          eglot-autoreconnect nil
          eglot-send-changes-idle-time 0.1)
    (setq buffer (find-file-noselect file))
    (set-buffer buffer)
    (unless (eq major-mode 'text-mode) (text-mode))
    (apply #'eglot (eglot--guess-contact))
    (pi-test--require (pi-test--wait (lambda ()
                                       (with-current-buffer buffer
                                         (and (eglot-managed-p) (eglot-current-server))))
                                     30)
                      "eglot connected and manages the buffer")
    (setq pi-test--server (eglot-current-server))
    (pi-test--wait (lambda () (pi-snippets-state pi-test--server)) 15)

    ;; The typo's hint, through Flymake.
    (let ((hint (pi-test--wait
                 (lambda ()
                   (with-current-buffer buffer
                     (flymake-start)
                     (cl-find-if (lambda (d)
                                   (string-match-p "did you mean %review\\?"
                                                   (flymake-diagnostic-text d)))
                                 (flymake-diagnostics))))
                 15)))
      (pi-test--check hint "Flymake shows the hint of %reveiw")
      (when hint
        (pi-test--check (equal (buffer-substring-no-properties (flymake-diagnostic-beg hint)
                                                               (flymake-diagnostic-end hint))
                               "%reveiw")
                        "the hint is on %reveiw"
                        "%S" (buffer-substring-no-properties (flymake-diagnostic-beg hint)
                                                             (flymake-diagnostic-end hint)))
        (pi-test--check (eq (flymake-diagnostic-type hint) 'eglot-note)
                        "a Hint is an Eglot note" "%S" (flymake-diagnostic-type hint))))

    ;; References (xref-find-references): the key and the two uses.
    (goto-char (point-min))
    (search-forward "%rev")
    (let* ((xrefs (with-timeout (15 nil)
                    (xref-backend-references
                     'eglot (xref-backend-identifier-at-point 'eglot))))
           (groups (mapcar (lambda (x)
                             (file-name-nondirectory
                              (xref-location-group (xref-item-location x))))
                           xrefs)))
      (pi-test--check (equal (sort groups #'string<)
                             '("prompt.txt" "prompt.txt" "settings.json"))
                      "references: the key and the uses (not x%review, not the escape)"
                      "%S" groups))

    ;; Workspace symbols (xref-find-apropos): Pi's ranking of "re".
    (let* ((xrefs (with-timeout (15 nil) (xref-backend-apropos 'eglot "re")))
           ;; Eglot shows each symbol as the line of its location: the key's.
           (lines (mapcar (lambda (x) (string-trim (substring-no-properties
                                                    (xref-item-summary x))))
                          xrefs)))
      (pi-test--check (equal lines '("\"rebase\": \"Rebase it on main\""
                                     "\"review\": \"Review this change\","))
                      "workspace symbols: both snippets at their keys, in Pi's order"
                      "%S" lines)
      (pi-test--check (cl-every (lambda (x)
                                  (equal (file-truename
                                          (xref-location-group (xref-item-location x)))
                                         (file-truename settings)))
                                xrefs)
                      "each symbol is in the settings file"))

    ;; Rename: the key (its buffer left unsaved) and every marker Pi expands.
    (goto-char (point-min))
    (search-forward "%rev")
    (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
      (with-timeout (20 (pi-test--log "rename timed out"))
        (eglot-rename "code-review")))
    (pi-test--check (equal (with-current-buffer buffer (buffer-string))
                           (concat "please %code-review and (%code-review).\n"
                                   "x%review %%review %reveiw\n"))
                    "the markers renamed, the look-alikes left"
                    "%S" (with-current-buffer buffer (buffer-string)))
    (let ((settings-buffer (get-file-buffer settings)))
      (pi-test--check (and settings-buffer
                           (equal (with-current-buffer settings-buffer (buffer-string))
                                  (string-replace "\"review\":" "\"code-review\":"
                                                  pi-test--settings)))
                      "the key renamed, nothing else in the file")
      (pi-test--check (and settings-buffer (buffer-modified-p settings-buffer))
                      "the settings buffer holds the edit, unsaved"))
    (dolist (b (buffer-list))
      (when (buffer-file-name b)
        (with-current-buffer b (set-buffer-modified-p nil))))
    (pi-test--finish (if (= pi-test--failures 0) 0 1))))

(run-at-time pi-test--timeout nil
             (lambda ()
               (pi-test--log "overall timeout of %s s reached" pi-test--timeout)
               (kill-emacs 2)))

(condition-case err
    (pi-test--main)
  (error
   (pi-test--log "ERROR: %s" (error-message-string err))
   (pi-test--finish 1)))

;;; test-eglot-manage.el ends here
