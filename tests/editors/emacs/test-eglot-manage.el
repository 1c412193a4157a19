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

(defvar pi-test--name "test-eglot-manage")
(load (expand-file-name "pi-test-eglot" (file-name-directory
                                         (or load-file-name buffer-file-name)))
      nil t)

(defconst pi-test--settings
  (concat "{\n  \"piSimpleSnippets\": {\n    \"snippets\": {\n"
          "      \"review\": \"Review this change\",\n"
          "      \"rebase\": \"Rebase it on main\"\n    }\n  }\n}\n"))
(defconst pi-test--prompt "please %review and (%review).\nx%review %%review %reveiw\n")

(defun pi-test--main ()
  "Run every check."
  (require 'xref)
  (let* ((opened (pi-test-eglot-open "manage" pi-test--settings pi-test--prompt))
         (settings (plist-get opened :settings))
         (buffer (plist-get opened :buffer)))

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

(pi-test-eglot-run #'pi-test--main)

;;; test-eglot-manage.el ends here
