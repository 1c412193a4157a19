;;; test-eglot-edit.el --- Batch test: editing a snippet's text through Eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from anywhere:
;;
;;   emacs --batch -Q -l tests/editors/emacs/test-eglot-edit.el
;;
;; Environment: PI_SNIPPETS_SERVER (server command, split on whitespace;
;; default "pi-snippets-lsp"), PI_SNIPPETS_TEST_TIMEOUT (seconds, default 90).
;;
;; `pi-snippets-edit-snippet' on a marker opens the snippet's text unescaped
;; (quotes, backslashes, line breaks, %, non-ASCII); `save-buffer' there
;; writes a new text back to the settings file, escaped, through Eglot, and
;; saves that file; the text expands at once and opens again exactly; with no
;; marker at point a name is asked for; a settings file changed on disk
;; meanwhile refuses the save and the buffer keeps what was typed.  Exit code
;; 0 when every check passes, 1 on a failure, 2 when the time limit is hit.

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

(defconst pi-test--old-token
  "\"Say \\\"hi\\\" to C:\\\\dir,\\n100% caf\\u00e9 😀\"")
(defconst pi-test--settings
  (concat "{\n  \"theme\": \"😀 中文\",\n  \"piSimpleSnippets\": {\n    \"snippets\": {\n"
          "      \"tricky\": " pi-test--old-token ",\n"
          "      \"other\": \"Other\"\n    }\n  }\n}\n"))
(defconst pi-test--old "Say \"hi\" to C:\\dir,\n100% café 😀")
(defconst pi-test--new "New \"quoted\" \\n stays, C:\\\\x\n  100%% 中文 😀\n\tend\n")
(defconst pi-test--new-token
  "\"New \\\"quoted\\\" \\\\n stays, C:\\\\\\\\x\\n  100%% 中文 😀\\n\\tend\\n\"")
(defconst pi-test--prompt "use %tricky here\n")

(defun pi-test--log (fmt &rest args)
  "Print FMT with ARGS on stderr with a prefix."
  (message "[test-eglot-edit] %s" (apply #'format fmt args)))

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

(defun pi-test--read-file (file)
  "FILE's text, decoded as UTF-8."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (buffer-string)))

(defun pi-test--main ()
  "Run every check."
  (require 'eglot)
  (require 'pi-snippets)
  (pi-test--log "Emacs %s, eglot from %s" emacs-version (locate-library "eglot"))
  (setq pi-test--tmp (make-temp-file "pi-snippets-emacs-edit-" t))
  (let* ((agent-dir (expand-file-name "agent" pi-test--tmp))
         (settings (expand-file-name "settings.json" agent-dir))
         (project (expand-file-name "project/" pi-test--tmp))
         (file (expand-file-name "prompt.txt" project))
         (command (split-string (or (getenv "PI_SNIPPETS_SERVER") "pi-snippets-lsp")))
         buffer snippet)
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

    ;; The marker at point opens, unescaped.
    (goto-char (point-min))
    (search-forward "%tri")
    (setq snippet (pi-snippets-edit-snippet))
    (pi-test--require (buffer-live-p snippet) "a buffer opens for the snippet")
    (with-current-buffer snippet
      (pi-test--check (equal (buffer-string) pi-test--old)
                      "it holds the text as Pi reads it" "%S" (buffer-string))
      (pi-test--check (not (buffer-modified-p)) "unmodified when opened")
      (pi-test--check (eq (key-binding (kbd "C-x C-s")) 'pi-snippets-edit-save)
                      "C-x C-s saves it to the settings file")
      ;; A new text, saved back escaped; the settings file is written.
      (erase-buffer)
      (insert pi-test--new)
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
        (pi-test--check (pi-snippets-edit-save) "the save succeeds"))
      (pi-test--check (not (buffer-modified-p)) "the snippet buffer is saved"))
    (let ((disk (pi-test--read-file settings)))
      (pi-test--check (equal disk (string-replace pi-test--old-token pi-test--new-token
                                                  pi-test--settings))
                      "the settings file holds the new token, every other byte kept"
                      "%S" disk))
    (let ((answer (jsonrpc-request pi-test--server :snippets/expand
                                   (list :text "%tricky") :timeout 10)))
      (pi-test--check (equal (plist-get answer :text) pi-test--new)
                      "%tricky expands to the new text at once"
                      "%S" (plist-get answer :text)))
    ;; Opened again: exactly what was typed.
    (with-current-buffer buffer
      (pi-snippets-edit-snippet "tricky"))
    (with-current-buffer snippet
      (pi-test--check (equal (buffer-string) pi-test--new)
                      "opened again, it holds exactly what was typed" "%S" (buffer-string)))

    ;; No marker at point: a name is asked for.
    (let (other)
      (with-current-buffer buffer
        (goto-char (point-max))
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (_prompt names &rest _)
                     (pi-test--check (equal (sort (copy-sequence names) #'string<)
                                            '("other" "tricky"))
                                     "the snippets are offered" "%S" names)
                     "other")))
          (setq other (pi-snippets-edit-snippet))))
      (pi-test--check (and (buffer-live-p other)
                           (equal (with-current-buffer other (buffer-string)) "Other"))
                      "the picked snippet opens")
      ;; The settings file changes on disk meanwhile: refused, nothing lost.
      (let ((meanwhile (string-replace "\"Other\"" "\"Changed by hand\""
                                       (pi-test--read-file settings))))
        (sleep-for 1.1)  ; a new modification time
        (pi-test--write-file settings meanwhile)
        ;; Emacs takes the change in (as `auto-revert-mode' would).
        (let ((visiting (get-file-buffer settings)))
          (when visiting
            (with-current-buffer visiting
              (pi-test--log "the settings buffer is managed by Eglot: %S" (eglot-managed-p))
              (revert-buffer t t))))
        (sleep-for 0.3)
        (with-current-buffer other
          (erase-buffer)
          (insert "Mine")
          (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
            (pi-test--check (not (pi-snippets-edit-save)) "the save is refused"))
          (pi-test--check (and (buffer-modified-p) (equal (buffer-string) "Mine"))
                          "the buffer keeps the typed text, unsaved"))
        (pi-test--check (equal (pi-test--read-file settings) meanwhile)
                        "the settings file keeps the change made meanwhile")
        (with-current-buffer "*Messages*"
          (pi-test--check (string-match-p "%other not saved: .*was changed in" (buffer-string))
                          "the user is told why" "%s" (buffer-string)))))
    (dolist (b (buffer-list))
      (with-current-buffer b (set-buffer-modified-p nil)))
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

;;; test-eglot-edit.el ends here
