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

(defvar pi-test--name "test-eglot-edit")
(load (expand-file-name "pi-test-eglot" (file-name-directory
                                         (or load-file-name buffer-file-name)))
      nil t)

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

(defun pi-test--main ()
  "Run every check."
  (let* ((opened (pi-test-eglot-open "edit" pi-test--settings pi-test--prompt))
         (settings (plist-get opened :settings))
         (file (plist-get opened :file))
         (buffer (plist-get opened :buffer))
         snippet)

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

(pi-test-eglot-run #'pi-test--main)

;;; test-eglot-edit.el ends here
