;;; test-eglot.el --- Batch test of pi-snippets.el against pi-snippets-lsp  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from anywhere:
;;
;;   emacs --batch -Q -l tests/editors/emacs/test-eglot.el
;;
;; Environment:
;;   PI_SNIPPETS_SERVER        server command, split on whitespace
;;                             (default "pi-snippets-lsp")
;;   PI_SNIPPETS_TEST_TIMEOUT  overall limit in seconds (default 90)
;;   PI_SNIPPETS_TEST_DUMP     when set, print the Eglot events and
;;                             stderr buffers even on success
;;
;; It writes a Pi settings file with two snippets into a temporary
;; PI_CODING_AGENT_DIR, visits a text-mode file, starts Eglot with the
;; server through `pi-snippets.el', then checks: the `snippets/didLoad'
;; notification, `%' completion (candidates, and acceptance through the
;; README's C-M-i binding and through company), expansion
;; of the buffer and of a region, `snippets/list', `snippets/reload', the
;; shortcut translation, hover through eldoc, definition through xref, the
;; code actions, and saving a snippet (the name asked, completing at once).  Exit code 0 when everything passes, 1 on
;; a failed check or error, 2 when the overall time limit is hit.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'json)

(defvar pi-test--name "test-eglot")
(load (expand-file-name "pi-test-eglot" (file-name-directory
                                         (or load-file-name buffer-file-name)))
      nil t)

(defconst pi-test--use-mcp "Use your MCP tools to find the information")
(defconst pi-test--brief "Be brief.")
(defconst pi-test--rev "Review $HOME:\n\tuse `x` }\n  end ${1:y}"
  "A multi-line value with $HOME, a backtick, a tab and a closing brace.")

(defun pi-test--main ()
  "Run every check."
  (require 'eglot)
  (require 'pi-snippets)
  (pi-test--log "Emacs %s, eglot from %s" emacs-version (locate-library "eglot"))

  ;; Configuration: a private agent dir with two snippets.
  (setq pi-test--tmp (make-temp-file "pi-snippets-emacs-" t))
  (let* ((agent-dir (expand-file-name "agent" pi-test--tmp))
         (project (expand-file-name "project/" pi-test--tmp))
         (file (expand-file-name "prompt.txt" project))
         (command (split-string (or (getenv "PI_SNIPPETS_SERVER") "pi-snippets-lsp")))
         buffer)
    (pi-test--write-file
     (expand-file-name "settings.json" agent-dir)
     (json-encode
      `((piSimpleSnippets
         . ((snippets . ((use-mcp . ,pi-test--use-mcp)
                         (brief . ,pi-test--brief))))))))
    (pi-test--write-file file "")
    (setenv "PI_CODING_AGENT_DIR" agent-dir)
    (setq pi-snippets-server-command command)
    ;; Synchronous connect: a server that dies or hangs during `initialize'
    ;; signals an error here (caught below) instead of inside a process
    ;; sentinel, where batch Emacs would exit at once with code 255.
    (setq eglot-sync-connect t
          eglot-connect-timeout 30
          eglot-autoreconnect nil
          eglot-send-changes-idle-time 0.1)
    ;; Eglot declares snippet support when yasnippet is on, as in most set-ups
    ;; (Debian's elpa-yasnippet): the items must still arrive as plain text.
    (when (require 'yasnippet nil t)
      (yas-global-mode 1))
    (pi-test--log "yasnippet: %s" (if (bound-and-true-p yas-global-mode) "on" "not installed"))
    (pi-test--log "server command: %S" command)
    (pi-test--require (executable-find (car command))
                      "server executable found" "%s not on PATH" (car command))

    ;; Shortcut translation (pure).
    (pi-test--check (equal (pi-snippets-shortcut-key "ctrl+shift+s") (kbd "C-S-s"))
                    "shortcut ctrl+shift+s -> C-S-s"
                    "%S" (pi-snippets-shortcut-key "ctrl+shift+s"))
    (pi-test--check (equal (pi-snippets-shortcut-key "alt+f5") (kbd "M-<f5>"))
                    "shortcut alt+f5 -> M-<f5>"
                    "%S" (pi-snippets-shortcut-key "alt+f5"))
    (pi-test--check (null (pi-snippets-shortcut-key "s")) "shortcut without modifier rejected")

    ;; Registration.
    (pi-test--check (eq (cdr (car eglot-server-programs)) 'pi-snippets--contact)
                    "registered first in eglot-server-programs")

    ;; Visit the file and connect.
    (setq buffer (find-file-noselect file))
    (set-buffer buffer)
    (unless (eq major-mode 'text-mode) (text-mode))
    (pi-test--check (eq major-mode 'text-mode) "buffer is in text-mode")
    (let ((contact (eglot--guess-contact)))
      (pi-test--log "guessed contact: %S" (cl-subseq contact 2 4))
      (pi-test--require (eq (nth 2 contact) 'pi-snippets-server)
                        "eglot guesses the pi-snippets-server class" "%S" contact)
      (apply #'eglot contact))
    (pi-test--require (pi-test--wait (lambda ()
                                       (with-current-buffer buffer
                                         (and (eglot-managed-p) (eglot-current-server))))
                                     30)
                      "eglot connected and manages the buffer" "no connection after 30 s")
    (setq pi-test--server (eglot-current-server))
    (pi-test--check (pi-snippets--ours-p pi-test--server) "server is pi-snippets-lsp")
    (pi-test--check (equal (plist-get (eglot--server-info pi-test--server) :name)
                           "pi-snippets-lsp")
                    "serverInfo.name is pi-snippets-lsp"
                    "%S" (eglot--server-info pi-test--server))
    (pi-test--check (equal (plist-get (eglot-initialization-options pi-test--server)
                                      :trustProjectSettings)
                           :json-false)
                    "initializationOptions.trustProjectSettings is false")
    (pi-test--check (equal (plist-get (eglot-initialization-options pi-test--server)
                                      :notifications)
                           ["snippets/didLoad"])
                    "initializationOptions opts in to snippets/didLoad")
    (pi-test--check (memq #'pi-snippets-completion-at-point completion-at-point-functions)
                    "pi-snippets capf installed in the managed buffer")

    ;; snippets/didLoad notification.
    (pi-test--check (pi-test--wait (lambda () (pi-snippets-state pi-test--server)) 15)
                    "snippets/didLoad received" "no notification within 15 s")
    (pi-test--check (equal (sort (pi-snippets-snippet-names pi-test--server) #'string<)
                           '("brief" "use-mcp"))
                    "didLoad lists both snippets"
                    "%S" (pi-snippets-state pi-test--server))

    ;; Completion: candidates for "see %us".
    (goto-char (point-max))
    (insert "see %us")
    (let* ((capf (pi-snippets-completion-at-point))
           (start (nth 0 capf))
           (end (nth 1 capf))
           (table (nth 2 capf))
           (candidates (and capf
                            (with-timeout (15 (pi-test--log "completion timed out") nil)
                              (all-completions (buffer-substring-no-properties start end)
                                               table)))))
      (pi-test--require capf "completion-at-point function answers at %us")
      (pi-test--check (equal (buffer-substring-no-properties start end) "%us")
                      "completion bounds cover the token from %"
                      "%S" (buffer-substring-no-properties start end))
      (pi-test--require (member "%use-mcp" candidates)
                        "%use-mcp offered for %us" "candidates: %S" candidates))

    ;; The same through a raw textDocument/completion request.
    (let* ((items (with-timeout (15 nil)
                    (jsonrpc-request pi-test--server :textDocument/completion
                                     (eglot--CompletionParams)
                                     :deferred :textDocument/completion
                                     :timeout 10)))
           (items (append (if (vectorp items) items (plist-get items :items)) nil))
           (item (cl-find "%use-mcp" items
                          :key (lambda (i) (plist-get i :label)) :test #'equal))
           (edit (plist-get item :textEdit)))
      (pi-test--check item "raw completion has a %use-mcp item" "%S" items)
      (pi-test--check (and edit
                           (equal (plist-get (plist-get (plist-get edit :range) :start)
                                             :character)
                                  4)
                           (equal (plist-get (plist-get (plist-get edit :range) :end)
                                             :character)
                                  7))
                      "textEdit runs from % to the cursor" "%S" edit))

    ;; Accept: completion-at-point with the single match inserts it, run
    ;; through the key the README gives it.  Text and Markdown modes bind
    ;; C-M-i to `ispell-complete-word' (Emacs 28, 29); eglot's minor-mode
    ;; map wins over the major mode's.
    (pi-test--log "C-M-i in %s before the README's binding: %S"
                  major-mode (key-binding (kbd "C-M-i")))
    (define-key eglot-mode-map (kbd "C-M-i") #'completion-at-point)
    (pi-test--check (eq (key-binding (kbd "C-M-i")) #'completion-at-point)
                    "the README's binding: C-M-i runs completion-at-point in a managed buffer"
                    "%S" (key-binding (kbd "C-M-i")))
    (let ((completion-styles '(basic))
          (completion-cycle-threshold nil))
      (with-timeout (20 (pi-test--log "completion-at-point timed out"))
        (call-interactively (key-binding (kbd "C-M-i")))))
    (pi-test--require (equal (buffer-string) "see %use-mcp")
                      "accepting the completion gives \"see %use-mcp\""
                      "buffer: %S" (buffer-string))

    ;; Expansion of the whole buffer.
    (pi-test--require (with-timeout (15 nil) (pi-snippets-expand-buffer))
                      "pi-snippets-expand-buffer reports a change")
    (pi-test--check (equal (buffer-string) (concat "see " pi-test--use-mcp))
                    "marker replaced by the snippet value" "buffer: %S" (buffer-string))
    (pi-test--check (not (with-timeout (15 t) (pi-snippets-expand-buffer)))
                    "expanding again changes nothing")

    ;; Expansion of a region only.
    (goto-char (point-max))
    (insert "\n%brief and x%brief, %%brief")
    (let ((line-start (line-beginning-position)))
      (with-timeout (15 nil) (pi-snippets-expand-region line-start (point-max))))
    (pi-test--check (equal (buffer-string)
                           (concat "see " pi-test--use-mcp "\n"
                                   pi-test--brief " and x%brief, %brief"))
                    "region expansion follows the boundary and escape rules"
                    "buffer: %S" (buffer-string))

    ;; snippets/list.
    (let* ((result (with-timeout (15 nil)
                     (jsonrpc-request pi-test--server :snippets/list
                                      (list :uri (pi-snippets--buffer-uri))
                                      :timeout 10)))
           (snippets (append (plist-get result :snippets) nil)))
      (pi-test--check (= (length snippets) 2) "snippets/list returns 2 snippets" "%S" result)
      (pi-test--check (equal (plist-get (cl-find "use-mcp" snippets
                                                 :key (lambda (s) (plist-get s :name))
                                                 :test #'equal)
                                        :value)
                             pi-test--use-mcp)
                      "snippets/list carries the value")
      (pi-test--check (equal (append (plist-get result :warnings) nil) nil)
                      "no warnings" "%S" (plist-get result :warnings)))
    (let ((listed (with-timeout (15 nil) (pi-snippets-list t))))
      (pi-test--check (= (length (plist-get listed :snippets)) 2) "pi-snippets-list"))
    (with-timeout (15 nil) (pi-snippets-list))
    (pi-test--check (and (get-buffer "*pi-snippets*")
                         (with-current-buffer "*pi-snippets*"
                           (string-match-p "%use-mcp" (buffer-string))))
                    "pi-snippets-list shows the snippets")

    ;; snippets/reload after editing the settings: a third snippet, a shortcut.
    (pi-test--write-file
     (expand-file-name "settings.json" agent-dir)
     (json-encode
      `((piSimpleSnippets
         . ((shortcut . "ctrl+shift+s")
            (snippets . ((use-mcp . ,pi-test--use-mcp)
                         (brief . ,pi-test--brief)
                         (third . "Third one."))))))))
    (let ((result (with-timeout (15 nil) (pi-snippets-reload))))
      (pi-test--check (= (length (plist-get result :snippets)) 3)
                      "snippets/reload picks up the edited settings" "%S" result)
      (pi-test--check (equal (plist-get result :shortcut) "ctrl+shift+s")
                      "shortcut reported" "%S" (plist-get result :shortcut)))
    (pi-test--check (eq (lookup-key (cdr (assq 'pi-snippets-shortcut-mode
                                               minor-mode-overriding-map-alist))
                                    (kbd "C-S-s"))
                        #'pi-snippets-insert-trigger)
                    "shortcut bound to pi-snippets-insert-trigger in the buffer")
    (pi-test--check (eq (key-binding (kbd "C-S-s")) #'pi-snippets-insert-trigger)
                    "C-S-s is active in the managed buffer" "%S" (key-binding (kbd "C-S-s")))
    (with-temp-buffer
      (pi-test--check (not (eq (key-binding (kbd "C-S-s")) #'pi-snippets-insert-trigger))
                      "shortcut not bound in an unmanaged buffer"))

    ;; A mode where `%' is punctuation still completes the whole token.
    (let ((table (make-syntax-table (syntax-table))))
      (modify-syntax-entry ?% "." table)
      (set-syntax-table table)
      (goto-char (point-max))
      (insert "\n(%thi")
      (let ((capf (pi-snippets-completion-at-point)))
        (pi-test--check (and capf (equal (buffer-substring-no-properties (nth 0 capf) (nth 1 capf))
                                         "%thi"))
                        "bounds include % when it is punctuation"
                        "%S" (and capf (buffer-substring-no-properties (nth 0 capf) (nth 1 capf))))
        (pi-test--check (member "%third"
                                (and capf
                                     (with-timeout (15 nil)
                                       (all-completions "%thi" (nth 2 capf)))))
                        "%third offered after ("))
      ;; A bare `%' lists every snippet.
      (insert "\n%")
      (let* ((capf (pi-snippets-completion-at-point))
             (all (and capf (with-timeout (15 nil) (all-completions "%" (nth 2 capf))))))
        (pi-test--check (equal (sort (copy-sequence all) #'string<)
                               '("%brief" "%third" "%use-mcp"))
                        "a bare % lists every snippet" "%S" all)))

;; The editor features: hover through eldoc, definition through xref, the
    ;; code actions, and saving a snippet (its name asked for).
    (set-syntax-table text-mode-syntax-table)
    (switch-to-buffer buffer)
    (goto-char (point-max))
    (insert "\nask %brief now")
    (eglot--signal-textDocument/didChange)  ; what the idle timer would send
    (search-backward "%brief")
    (forward-char 2)
    (let (shown)
      (eglot-hover-eldoc-function (lambda (info &rest _) (setq shown (or info 'none))))
      (pi-test--wait (lambda () shown) 15)
      (pi-test--check (and (stringp shown) (string-match-p (regexp-quote pi-test--brief) shown)
                           (string-match-p "From the user settings file" shown))
                      "eldoc shows the hovered snippet's text and file" "%S" shown))
    (let* ((xrefs (with-timeout (15 nil)
                    (eglot--lsp-xrefs-for-method :textDocument/definition)))
           (location (and xrefs (xref-item-location (car xrefs)))))
      (pi-test--check (and location
                           (equal (file-truename (xref-location-group location))
                                  (file-truename (expand-file-name "settings.json" agent-dir))))
                      "xref (M-.) goes to the settings file" "%S" xrefs))
    (let ((titles (mapcar (lambda (a) (plist-get a :title))
                          (with-timeout (15 nil) (eglot-code-actions (point) (point))))))
      (pi-test--check (equal titles '("Expand snippet markers"))
                      "the code action on a marker" "%S" titles))
    (goto-char (point-max))
    (insert "\nRemember the release notes")
    (eglot--signal-textDocument/didChange)
    (let ((beg (line-beginning-position))
          (end (point))
          (last-nonmenu-event ?\r))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (&rest _) "Save selection as snippet"))
                ((symbol-function 'read-string) (lambda (&rest _) "notes"))
                ;; Eglot 1.9 asks before editing a file no buffer visits.
                ((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
        (with-timeout (20 (pi-test--log "save action timed out"))
          (eglot-code-actions beg end nil t)))
      (goto-char (point-max))
      (insert "\n%no")
      (eglot--signal-textDocument/didChange)
      (let* ((capf (pi-snippets-completion-at-point))
             (all (and capf (with-timeout (15 nil) (all-completions "%no" (nth 2 capf))))))
        (pi-test--check (member "%notes" all) "the saved snippet completes right after" "%S" all))
      (delete-region (- (point) 4) (point))
      (let ((settings-buffer (get-file-buffer (expand-file-name "settings.json" agent-dir))))
        (pi-test--check (and settings-buffer (buffer-modified-p settings-buffer))
                        "the settings buffer holds the edit, unsaved")
        ;; What the idle timer would send for it, were it managed.
        (when settings-buffer
          (with-current-buffer settings-buffer
            (when (eglot-managed-p) (eglot--signal-textDocument/didChange)))))
      (let ((result (with-timeout (15 nil)
                      (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
                        (pi-snippets-save-region beg end "release-notes")))))
        (pi-test--check (and (equal (plist-get result :name) "release-notes")
                             (eq (plist-get result :applied) t))
                        "pi-snippets-save-region saves under the given name" "%S" result)))
    (dolist (b (buffer-list))
      (when (buffer-file-name b)
        (with-current-buffer b (set-buffer-modified-p nil))))
    (set-buffer buffer)

    (set-buffer-modified-p nil)

    ;; An Org file of the same project joins the running server.
    (let ((org (find-file-noselect (expand-file-name "notes.org" project))))
      (set-buffer org)
      (pi-test--check (eq major-mode 'org-mode) "notes.org is in org-mode" "%S" major-mode)
      (pi-test--check (pi-test--wait (lambda () (with-current-buffer org (eglot-managed-p))) 10)
                      "the org buffer is managed by the same server")
      (pi-test--check (eq (eglot-current-server) pi-test--server) "same server object")
      (insert "* Task\nplease %bri")
      (let ((capf (pi-snippets-completion-at-point)))
        (pi-test--check (member "%brief"
                                (and capf
                                     (with-timeout (15 nil)
                                       (all-completions
                                        (buffer-substring-no-properties (nth 0 capf) (nth 1 capf))
                                        (nth 2 capf)))))
                        "%brief offered in org-mode"))
      (set-buffer-modified-p nil))

    ;; expandOnCompletion: exactly the configured text arrives, on an indented
    ;; list line and at the end of a file without a final newline.
    (pi-test--write-file
     (expand-file-name "settings.json" agent-dir)
     (json-encode
      `((piSimpleSnippets
         . ((expandOnCompletion . t)
            (snippets . ((rev . ,pi-test--rev) (brief . ,pi-test--brief))))))))
    (set-buffer buffer)
    (with-timeout (15 nil) (pi-snippets-reload))
    (let ((list-file (expand-file-name "list.txt" project))
          (eof-file (expand-file-name "noeol.txt" project)))
      (pi-test--write-file list-file "")
      (pi-test--write-file eof-file "intro\nsee ")
      (dolist (case `((,list-file "  - %rev" ,(concat "  - " pi-test--rev) "indented list line")
                      (,eof-file "%rev" ,(concat "intro\nsee " pi-test--rev)
                                 "end of a file without a final newline")))
        (pcase-let ((`(,file ,typed ,expected ,what) case))
          (set-buffer (find-file-noselect file))
          (pi-test--check (pi-test--wait (lambda () (eglot-managed-p)) 10)
                          (format "%s: the buffer is managed" what))
          (goto-char (point-max))
          (insert typed)
          (let ((completion-styles '(basic))
                (completion-cycle-threshold nil))
            (with-timeout (20 (pi-test--log "completion-at-point timed out"))
              (completion-at-point)))
          (pi-test--check (equal (buffer-string) expected)
                          (format "%s: exactly the configured text" what)
                          "buffer: %S" (buffer-string))
          (pi-test--check (= (point) (point-max))
                          (format "%s: point after the text" what))
          (let ((require-final-newline nil))
            (save-buffer))
          (pi-test--check (equal (with-temp-buffer
                                   (let ((coding-system-for-read 'utf-8-unix))
                                     (insert-file-contents file))
                                   (buffer-string))
                                 expected)
                          (format "%s: the saved file holds it byte for byte" what)))))
    ;; company, the other front end the README names: `company-capf' over
    ;; the same completion function, accepted with `company-complete-selection'.
    (if (not (require 'company nil t))
        (pi-test--log "company not installed: its check skipped")
      (let ((file (expand-file-name "company.txt" project)))
        (pi-test--write-file file "")
        (set-buffer (find-file-noselect file))
        (pi-test--check (pi-test--wait (lambda () (eglot-managed-p)) 10)
                        "company: the buffer is managed")
        (goto-char (point-max))
        (insert "now %br")
        (company-mode 1)
        (with-timeout (20 (pi-test--log "company timed out"))
          (company-manual-begin)
          (pi-test--log "company candidates: %S"
                        (mapcar #'substring-no-properties company-candidates))
          (when company-candidates
            (company-complete-selection)))
        (pi-test--check (equal (buffer-string) (concat "now " pi-test--brief))
                        "company: accepting %brief inserts exactly the configured text"
                        "buffer: %S" (buffer-string))))
    (pi-test--finish (if (= pi-test--failures 0) 0 1))))

(pi-test-eglot-run #'pi-test--main)

;;; test-eglot.el ends here
