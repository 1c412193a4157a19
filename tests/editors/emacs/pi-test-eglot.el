;;; pi-test-eglot.el --- What every Eglot batch test of pi-snippets needs  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by test-eglot.el, test-eglot-manage.el and test-eglot-edit.el after
;; they set `pi-test--name' (the prefix of every log line).  It finds the
;; repository and the plugin, reads PI_SNIPPETS_TEST_TIMEOUT, and holds the
;; checks, the waiting and the exit: a failed check counts, a failed
;; requirement ends the run; the exit code is 0 when every check passed, 1
;; otherwise, 2 when `pi-test-eglot-run' hits the time limit.  The Eglot
;; event and stderr buffers are printed when a run fails (or always, with
;; PI_SNIPPETS_TEST_DUMP set), so a failure in CI shows what the server said.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(defvar pi-test--name "test-eglot"
  "The prefix of every log line: the test file's name.")

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

(defun pi-test--log (fmt &rest args)
  "Print FMT with ARGS on stderr with a prefix."
  (message "[%s] %s" pi-test--name (apply #'format fmt args)))

(defun pi-test--dump-server ()
  "Print the tail of every Eglot events and stderr buffer."
  (dolist (buffer (buffer-list))
    (when (string-match-p "EGLOT.*\\(events\\|stderr\\)" (buffer-name buffer))
      (with-current-buffer buffer
        (pi-test--log "---- %s (last 6000 chars) ----\n%s" (buffer-name)
                      (buffer-substring-no-properties
                       (max (point-min) (- (point-max) 6000)) (point-max)))))))

(defun pi-test--finish (code)
  "Shut the server down, clean up and exit Emacs with CODE."
  (when (or (/= code 0) (getenv "PI_SNIPPETS_TEST_DUMP"))
    (accept-process-output nil 0.3)     ; collect a dying server's last words
    (pi-test--dump-server))
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
  "Record a check named WHAT; OK non-nil means it passed.
DETAILS (format string and arguments) explain a failure."
  (cl-incf pi-test--checks)
  (if ok
      (pi-test--log "ok   %s" what)
    (cl-incf pi-test--failures)
    (pi-test--log "FAIL %s%s" what
                  (if details (concat ": " (apply #'format details)) "")))
  ok)

(defun pi-test--require (ok what &rest details)
  "Like `pi-test--check' (OK, WHAT, DETAILS) but stop everything on failure."
  (unless (apply #'pi-test--check ok what details)
    (pi-test--finish 1)))

(defun pi-test--wait (predicate seconds)
  "Process events until PREDICATE returns non-nil or SECONDS pass.
Return PREDICATE's value, or nil on timeout."
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

(defun pi-test--read-file (file)
  "FILE's text, decoded as UTF-8."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (buffer-string)))

(defun pi-test-eglot-open (tag settings-text prompt-text)
  "Start the server through Eglot on a prompt file; a plist of what was made.
TAG names the temporary folder; SETTINGS-TEXT is the user's settings file and
PROMPT-TEXT the prompt file's text.  The plist holds :agent-dir, :settings,
:project, :file and :buffer (the prompt file's buffer, current on return)."
  (require 'eglot)
  (require 'pi-snippets)
  (pi-test--log "Emacs %s, eglot from %s" emacs-version (locate-library "eglot"))
  (setq pi-test--tmp (make-temp-file (format "pi-snippets-emacs-%s-" tag) t))
  (let* ((agent-dir (expand-file-name "agent" pi-test--tmp))
         (settings (expand-file-name "settings.json" agent-dir))
         (project (expand-file-name "project/" pi-test--tmp))
         (file (expand-file-name "prompt.txt" project))
         (command (split-string (or (getenv "PI_SNIPPETS_SERVER") "pi-snippets-lsp")))
         buffer)
    (pi-test--write-file settings settings-text)
    (pi-test--write-file file prompt-text)
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
    (list :agent-dir agent-dir :settings settings :project project :file file
          :buffer buffer)))

(defun pi-test-eglot-run (main)
  "Call MAIN under the time limit; an error in it fails the run."
  (run-at-time pi-test--timeout nil
               (lambda ()
                 (pi-test--log "overall timeout of %s s reached" pi-test--timeout)
                 (pi-test--dump-server)
                 (kill-emacs 2)))
  (condition-case err
      (funcall main)
    (error
     (pi-test--log "ERROR: %s" (error-message-string err))
     (pi-test--finish 1))))

(provide 'pi-test-eglot)
;;; pi-test-eglot.el ends here
