;;; pi-snippets.el --- Eglot client for the pi-snippets-lsp %name snippet server  -*- lexical-binding: t; -*-

;; Author: pi-snippets-lsp contributors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9") (jsonrpc "1.0.14"))
;; Keywords: convenience, languages, tools
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; pi-snippets-lsp is a language server for the `%name' prompt snippets of
;; Pi's pi-simple-snippets extension.  This package teaches Eglot how to
;; start it and adds the few things plain Eglot cannot do on its own:
;;
;; - registers the server in `eglot-server-programs' for the major modes in
;;   `pi-snippets-modes' (markdown, gfm, text and org by default);
;; - sends `initializationOptions' with `:trustProjectSettings' (from
;;   `pi-snippets-trust-project-settings'), the opt-in to the server's
;;   `snippets/didLoad' notification and, optionally, `:piSimpleSnippets'
;;   (from `pi-snippets-settings');
;; - commands `pi-snippets-expand-region' and `pi-snippets-expand-buffer'
;;   that replace every `%name' marker with its snippet text, through the
;;   server's `snippets/expand' request (the same pass Pi runs on submit);
;; - commands `pi-snippets-reload' and `pi-snippets-list';
;; - `pi-snippets-save-region', and a name prompt for the server's "Save
;;   selection as snippet" code action;
;; - `pi-snippets-edit-snippet': a snippet's text in a buffer of its own,
;;   written back to its settings file by `save-buffer';
;; - handles the server's `snippets/didLoad' notification: shows
;;   configuration warnings, lists the snippets again, and binds the
;;   configured `shortcut' (it inserts `%' and asks for completion) in
;;   managed buffers;
;; - a completion-at-point wrapper so that `%name' tokens complete even in
;;   modes whose syntax table does not treat `%' as part of a word.
;;
;; Quick start:
;;
;;   (add-to-list 'load-path "/path/to/pi-snippets-lsp/editors/emacs")
;;   (require 'pi-snippets)
;;   (add-hook 'markdown-mode-hook #'eglot-ensure)
;;
;; Then `M-x eglot' in a Markdown buffer (or rely on the hook), type `%'
;; and use `completion-at-point', or company/corfu.  Text and Markdown
;; modes bind C-M-i to `ispell-complete-word'; to complete with it in the
;; buffers eglot manages:
;;
;;   (with-eval-after-load 'eglot
;;     (define-key eglot-mode-map (kbd "C-M-i") #'completion-at-point))
;;
;; Snippets live in Pi's settings file (`$PI_CODING_AGENT_DIR/settings.json',
;; else `~/.pi/agent/settings.json') under the key `piSimpleSnippets'.
;; Per-project values can also come from `eglot-workspace-configuration'
;; (section `:piSimpleSnippets'), which the server pulls through
;; `workspace/configuration'.
;;
;; Eglot manages one server per buffer: in the modes listed here
;; pi-snippets-lsp takes the place of the default server (for example
;; marksman in `markdown-mode').  Eglot also matches derived modes, so an
;; entry for `text-mode' covers every mode derived from it unless a more
;; specific entry comes first in `eglot-server-programs'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'eglot)

(defgroup pi-snippets nil
  "Eglot client for the pi-snippets-lsp language server."
  :group 'eglot
  :prefix "pi-snippets-")

(defun pi-snippets--custom-reregister (symbol value)
  "Set SYMBOL to VALUE and re-register the server with Eglot."
  (set-default symbol value)
  (when (fboundp 'pi-snippets-register)
    (pi-snippets-register)))

(defcustom pi-snippets-server-command '("pi-snippets-lsp")
  "Command line that starts pi-snippets-lsp, a list of strings.
The server speaks LSP on standard input/output.  For a virtual
environment use, e.g., (\"/path/to/venv/bin/pi-snippets-lsp\") or
\(\"python3\" \"-m\" \"pi_snippets_lsp\")."
  :type '(repeat string))

(defcustom pi-snippets-modes '(markdown-mode gfm-mode text-mode org-mode)
  "Major modes whose buffers Eglot should manage with pi-snippets-lsp.
Eglot also matches modes derived from these.  Setting this through
Customize (or `setopt') re-registers the server; after a plain
`setq', call `pi-snippets-register'."
  :type '(repeat symbol)
  :initialize #'custom-initialize-default
  :set #'pi-snippets--custom-reregister)

(defcustom pi-snippets-trust-project-settings nil
  "Non-nil means the server may read `<project>/.pi/settings.json'.
Sent as `initializationOptions.trustProjectSettings'.  Pi reads a
project settings file only for a trusted project; keep this nil for
projects whose files you have not checked."
  :type 'boolean)

(defcustom pi-snippets-settings nil
  "Client-side `piSimpleSnippets' value, or nil to send none.
When non-nil it is sent as `initializationOptions.piSimpleSnippets'
and merged by the server over the user and project settings files.
Write it as a plist, for example:

  (:snippets (:use-mcp \"Use your MCP tools to find the information\")
   :expandOnCompletion :json-false)"
  :type '(choice (const :tag "None" nil) (plist :tag "piSimpleSnippets value")))

(defcustom pi-snippets-request-timeout 10
  "Seconds to wait for an answer to a pi-snippets request."
  :type 'number)

(defcustom pi-snippets-bind-shortcut t
  "Non-nil means bind the server-reported `shortcut' in managed buffers.
The key inserts `%' and runs `completion-at-point', exactly what
typing `%' and asking for completion does."
  :type 'boolean)

(defconst pi-snippets--language-ids
  '((markdown-mode . "markdown")
    (gfm-mode . "markdown")
    (text-mode . "plaintext")
    (org-mode . "org"))
  "LSP language identifiers for the modes Eglot would otherwise misname.")

(defconst pi-snippets--token-regexp "%[a-z0-9._-]*\\="
  "Regexp matching a snippet token that ends at point.")

;;;; Server class and registration

(defclass pi-snippets-server (eglot-lsp-server) ()
  :documentation "An Eglot connection to pi-snippets-lsp.")

(defvar pi-snippets--state (make-hash-table :test #'eq :weakness 'key)
  "Map of server object to the last snippet list it reported.")

(defvar pi-snippets--unbindable-reported nil
  "Shortcut strings already reported as impossible to bind.")

(defun pi-snippets--json-bool (value)
  "Return VALUE as a JSON boolean for jsonrpc."
  (if value t :json-false))

(defun pi-snippets--initialization-options ()
  "Build the `initializationOptions' object sent to pi-snippets-lsp.
It opts in to `snippets/didLoad': the server sends its own
notification only to clients that ask for it."
  (append (list :trustProjectSettings
                (pi-snippets--json-bool pi-snippets-trust-project-settings)
                :notifications ["snippets/didLoad"])
          (and pi-snippets-settings
               (list :piSimpleSnippets pi-snippets-settings))))

(cl-defmethod eglot-initialization-options ((_server pi-snippets-server))
  "Send the pi-snippets options (see `pi-snippets-trust-project-settings')."
  (pi-snippets--initialization-options))

(defun pi-snippets--contact (&optional _interactive)
  "Contact for `eglot-server-programs': our class plus the command."
  (unless (and (consp pi-snippets-server-command)
               (cl-every #'stringp pi-snippets-server-command))
    (user-error "`pi-snippets-server-command' must be a non-empty list of strings"))
  (cons 'pi-snippets-server (copy-sequence pi-snippets-server-command)))

(defun pi-snippets--mode-specs ()
  "The MAJOR-MODE part of our `eglot-server-programs' entry."
  (mapcar (lambda (mode)
            (let ((id (alist-get mode pi-snippets--language-ids)))
              (if id (list mode :language-id id) mode)))
          pi-snippets-modes))

;;;###autoload
(defun pi-snippets-register ()
  "Put pi-snippets-lsp first in `eglot-server-programs' for `pi-snippets-modes'.
Any entry this function added before is replaced."
  (interactive)
  (setq eglot-server-programs
        (cl-remove-if (lambda (entry) (eq (cdr-safe entry) 'pi-snippets--contact))
                      eglot-server-programs))
  (when pi-snippets-modes
    (push (cons (pi-snippets--mode-specs) 'pi-snippets--contact)
          eglot-server-programs))
  eglot-server-programs)

(defun pi-snippets-unregister ()
  "Remove pi-snippets-lsp from `eglot-server-programs'."
  (interactive)
  (setq eglot-server-programs
        (cl-remove-if (lambda (entry) (eq (cdr-safe entry) 'pi-snippets--contact))
                      eglot-server-programs)))

;;;; Helpers

(defun pi-snippets--ours-p (server)
  "Non-nil when SERVER is a connection to pi-snippets-lsp."
  (and server
       (or (cl-typep server 'pi-snippets-server)
           (equal (plist-get (ignore-errors (eglot--server-info server)) :name)
                  "pi-snippets-lsp"))))

(defun pi-snippets--server ()
  "The pi-snippets-lsp server managing the current buffer, or nil."
  (let ((server (eglot-current-server)))
    (and (pi-snippets--ours-p server) server)))

(defun pi-snippets--server-or-lose ()
  "Like `pi-snippets--server', but signal a `user-error' when there is none."
  (or (pi-snippets--server)
      (user-error "pi-snippets: no pi-snippets-lsp server manages this buffer (try M-x eglot)")))

(defun pi-snippets--path-to-uri (path)
  "Convert PATH to a file URI with whichever Eglot function exists."
  (if (fboundp 'eglot-path-to-uri)
      (funcall 'eglot-path-to-uri path)
    (eglot--path-to-uri path)))

(defun pi-snippets--buffer-uri ()
  "URI of the current buffer's file, or nil."
  (and buffer-file-name (pi-snippets--path-to-uri buffer-file-name)))

(defun pi-snippets--request (server method params)
  "Send METHOD with PARAMS to SERVER and wait (bounded) for the result."
  (jsonrpc-request server method params :timeout pi-snippets-request-timeout))

(defun pi-snippets--format-warning (warning)
  "Prefix WARNING with the pi-simple-snippets tag unless it has it."
  (if (string-prefix-p "pi-simple-snippets:" warning)
      warning
    (concat "pi-simple-snippets: " warning)))

(defun pi-snippets--show-warnings (warnings)
  "Show the list WARNINGS in the echo area (and *Messages*)."
  (when warnings
    (message "%s" (mapconcat #'pi-snippets--format-warning warnings "\n"))))

(defun pi-snippets--store (server result)
  "Remember RESULT (a snippets/list shaped plist) for SERVER."
  (puthash server result pi-snippets--state)
  (dolist (buffer (ignore-errors (eglot--managed-buffers server)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (pi-snippets--apply-shortcut result))))
  result)

(defun pi-snippets-state (&optional server)
  "Last snippet list reported by SERVER (default: the current one).
A plist with keys :snippets (a vector of plists with :name :value
:preview :source), :shortcut, :expandOnCompletion and :warnings."
  (let ((server (or server (pi-snippets--server))))
    (and server (gethash server pi-snippets--state))))

(defun pi-snippets-snippet-names (&optional server)
  "Names of the snippets SERVER reported last, as a list of strings."
  (mapcar (lambda (item) (plist-get item :name))
          (append (plist-get (pi-snippets-state server) :snippets) nil)))

;;;; Notification

(cl-defmethod eglot-handle-notification
  (server (_method (eql 'snippets/didLoad)) &rest _params
          &key warnings &allow-other-keys)
  "Handle the `snippets/didLoad' notification SERVER sends.
It announces a new generation (`:generation', `:count', `:shortcut',
`:expandOnCompletion', WARNINGS) without the snippet values: show
the WARNINGS, then list the snippets again (`snippets/list') and
store the result for SERVER, which rebinds the shortcut."
  (pi-snippets--show-warnings (append warnings nil))
  (jsonrpc-async-request server :snippets/list (make-hash-table)
                         :success-fn (lambda (result)
                                       (pi-snippets--store server result))
                         :error-fn (lambda (error)
                                     (message "pi-simple-snippets: snippets/list failed: %S"
                                              error))
                         :timeout pi-snippets-request-timeout))

;;;; Completion

(defun pi-snippets-completion-at-point ()
  "Complete the `%name' token before point with pi-snippets-lsp.
Eglot computes the completion bounds from the symbol at point; in a
mode where `%' is punctuation, the `%' would fall outside them and
no candidate would match.  This wrapper runs
`eglot-completion-at-point' with a syntax table in which `%', `.',
`-' and `_' are symbol characters.  Elsewhere it returns nil so
other completion functions run."
  (when (and (pi-snippets--server)
             (save-excursion
               (re-search-backward pi-snippets--token-regexp
                                   (line-beginning-position) t)))
    (let ((table (make-syntax-table (syntax-table))))
      (dolist (char '(?% ?. ?- ?_))
        (modify-syntax-entry char "_" table))
      (with-syntax-table table
        (eglot-completion-at-point)))))

;;;; Shortcut

(defconst pi-snippets--named-keys
  '(("escape" . escape) ("esc" . escape) ("enter" . return) ("return" . return)
    ("tab" . tab) ("space" . ?\s) ("backspace" . backspace) ("delete" . delete)
    ("insert" . insert) ("clear" . clear) ("home" . home) ("end" . end)
    ("pageup" . prior) ("pagedown" . next) ("up" . up) ("down" . down)
    ("left" . left) ("right" . right))
  "Pi key names and the Emacs event each one stands for.")

(defconst pi-snippets--modifiers
  '(("ctrl" . control) ("shift" . shift) ("alt" . meta) ("super" . super))
  "Pi modifier names and their Emacs modifiers.")

(defun pi-snippets-shortcut-key (shortcut)
  "Translate Pi SHORTCUT (e.g. \"ctrl+shift+s\") into a key vector.
Return nil when it cannot be expressed as an Emacs key."
  (when (and (stringp shortcut) (not (string-empty-p (string-trim shortcut))))
    (let* ((text (downcase (string-trim shortcut)))
           (parts (if (string-suffix-p "++" text)
                      (append (split-string (substring text 0 -2) "+") (list "+"))
                    (split-string text "+")))
           (key (car (last parts)))
           (mods (mapcar (lambda (m) (cdr (assoc m pi-snippets--modifiers)))
                         (butlast parts)))
           (base (cond ((assoc key pi-snippets--named-keys)
                        (cdr (assoc key pi-snippets--named-keys)))
                       ((string-match-p "\\`f\\([1-9]\\|1[0-2]\\)\\'" key)
                        (intern key))
                       ((and (= (length key) 1)
                             (<= ?! (aref key 0) ?~))
                        (aref key 0)))))
      (when (and base mods (not (memq nil mods))
                 (= (length mods) (length (delete-dups (copy-sequence mods)))))
        (ignore-errors (vector (event-convert-list (append mods (list base)))))))))

(defun pi-snippets-insert-trigger ()
  "Insert `%' and ask for completion, as if `%' had been typed."
  (interactive)
  (self-insert-command 1 ?%)
  (completion-at-point))

(define-minor-mode pi-snippets-shortcut-mode
  "Buffer-local binding of the pi-snippets shortcut.
The key comes from the server's configuration (`shortcut' in
`piSimpleSnippets') and is installed by `pi-snippets--apply-shortcut'."
  :lighter nil
  :keymap (make-sparse-keymap))

(defun pi-snippets--apply-shortcut (state)
  "Bind (or unbind) the shortcut of STATE in the current buffer."
  (let* ((shortcut (plist-get state :shortcut))
         (shortcut (and (stringp shortcut) shortcut))
         (key (and shortcut pi-snippets-bind-shortcut
                   (pi-snippets-shortcut-key shortcut))))
    (setq-local minor-mode-overriding-map-alist
                (assq-delete-all 'pi-snippets-shortcut-mode
                                 (copy-alist minor-mode-overriding-map-alist)))
    (cond
     (key
      (let ((map (make-sparse-keymap)))
        (define-key map key #'pi-snippets-insert-trigger)
        (push (cons 'pi-snippets-shortcut-mode map) minor-mode-overriding-map-alist))
      (pi-snippets-shortcut-mode 1))
     (t
      (pi-snippets-shortcut-mode -1)
      (when (and shortcut pi-snippets-bind-shortcut
                 (not (member shortcut pi-snippets--unbindable-reported)))
        (push shortcut pi-snippets--unbindable-reported)
        (message "pi-simple-snippets: shortcut %S cannot be bound in Emacs; ignored"
                 shortcut))))))

;;;; Managed buffers

(defun pi-snippets--managed-mode-hook ()
  "Set up or tear down pi-snippets in a buffer Eglot (un)manages."
  (cond
   ((and (eglot-managed-p) (pi-snippets--server))
    (add-hook 'completion-at-point-functions #'pi-snippets-completion-at-point nil t)
    (let ((state (pi-snippets-state)))
      (when state (pi-snippets--apply-shortcut state))))
   (t
    (remove-hook 'completion-at-point-functions #'pi-snippets-completion-at-point t)
    (when pi-snippets-shortcut-mode (pi-snippets-shortcut-mode -1)))))

(add-hook 'eglot-managed-mode-hook #'pi-snippets--managed-mode-hook)

;;;; Commands

(defun pi-snippets--replace-region (beg end text)
  "Replace BEG..END with TEXT, keeping point and markers where possible."
  (let ((source (generate-new-buffer " *pi-snippets-expansion*" t)))
    (unwind-protect
        (progn
          (with-current-buffer source (insert text))
          (save-excursion
            (save-restriction
              (narrow-to-region beg end)
              (replace-buffer-contents source))))
      (kill-buffer source))))

(defun pi-snippets-expand-region (beg end)
  "Expand every `%name' marker between BEG and END.
The text goes to the server's `snippets/expand' request, the same pass
Pi runs on a submitted prompt (`%%name' gives a literal `%name').  The
region is replaced only when something changed.  Return non-nil when
it was."
  (interactive
   (if (use-region-p)
       (list (region-beginning) (region-end))
     (user-error "No active region (use `pi-snippets-expand-buffer' for the whole buffer)")))
  (let* ((server (pi-snippets--server-or-lose))
         (beg (min beg end))
         (end (max beg end))
         (text (buffer-substring-no-properties beg end))
         (uri (pi-snippets--buffer-uri))
         (result (pi-snippets--request server :snippets/expand
                                       (if uri (list :text text :uri uri)
                                         (list :text text))))
         (new (plist-get result :text))
         (changed (eq (plist-get result :changed) t)))
    (cond
     ((not (stringp new))
      (error "pi-snippets: unexpected snippets/expand result %S" result))
     ((and changed (not (string= new text)))
      (pi-snippets--replace-region beg end new)
      (when (called-interactively-p 'interactive)
        (message "pi-snippets: expanded"))
      t)
     (t
      (when (called-interactively-p 'interactive)
        (message "pi-snippets: nothing to expand"))
      nil))))

(defun pi-snippets-expand-buffer ()
  "Expand every `%name' marker in the whole buffer.
See `pi-snippets-expand-region'.  Return non-nil when something changed."
  (interactive)
  (let ((changed (save-restriction
                   (widen)
                   (pi-snippets-expand-region (point-min) (point-max)))))
    (when (called-interactively-p 'interactive)
      (message (if changed "pi-snippets: expanded" "pi-snippets: nothing to expand")))
    changed))

(defun pi-snippets-reload ()
  "Ask the server to re-read its settings (`snippets/reload').
Return the new snippet list (a plist, see `pi-snippets-state')."
  (interactive)
  (let* ((server (pi-snippets--server-or-lose))
         (result (pi-snippets--request server :snippets/reload (make-hash-table))))
    (pi-snippets--store server result)
    (let ((warnings (append (plist-get result :warnings) nil)))
      (if warnings
          (pi-snippets--show-warnings warnings)
        (message "pi-snippets: %d snippet(s) loaded"
                 (length (plist-get result :snippets)))))
    result))

(defun pi-snippets-list (&optional no-display)
  "Show the snippets the server has loaded (`snippets/list').
With NO-DISPLAY non-nil (from Lisp), only return the result plist."
  (interactive)
  (let* ((server (pi-snippets--server-or-lose))
         (uri (pi-snippets--buffer-uri))
         (result (pi-snippets--request server :snippets/list
                                       (if uri (list :uri uri) (make-hash-table)))))
    (pi-snippets--store server result)
    (unless no-display
      (let ((snippets (append (plist-get result :snippets) nil))
            (shortcut (plist-get result :shortcut))
            (warnings (append (plist-get result :warnings) nil)))
        (with-help-window "*pi-snippets*"
          (with-current-buffer standard-output
            (insert (format "%d snippet(s)" (length snippets))
                    (if (stringp shortcut) (format "   shortcut: %s" shortcut) "")
                    (format "   expandOnCompletion: %s\n\n"
                            (if (eq (plist-get result :expandOnCompletion) t)
                                "true" "false")))
            (let ((width (apply #'max 0 (mapcar (lambda (s) (1+ (length (plist-get s :name))))
                                                snippets))))
              (dolist (snippet snippets)
                (insert (propertize (format (format "%%-%ds" width)
                                            (concat "%" (plist-get snippet :name)))
                                    'face 'font-lock-keyword-face)
                        "  " (or (plist-get snippet :preview) "")
                        (let ((source (plist-get snippet :source)))
                          (if (stringp source)
                              (propertize (format "  [%s]" source) 'face 'shadow)
                            ""))
                        "\n")))
            (when warnings
              (insert "\nWarnings:\n")
              (dolist (warning warnings)
                (insert "  " (pi-snippets--format-warning warning) "\n")))))))
    result))

(pi-snippets-register)

;;;; Saving a snippet

(defun pi-snippets--read-name ()
  "Ask for the name of a new snippet; an empty answer lets the server make one."
  (string-trim (read-string "Snippet name (empty: from its first words): ")))

(defun pi-snippets--with-name (argument name)
  "ARGUMENT (a plist) with :name NAME, unless NAME is empty."
  (if (string-empty-p name)
      argument
    (plist-put (copy-sequence argument) :name name)))

(cl-defmethod eglot-execute-command
  ((server pi-snippets-server) (command (eql 'pi-snippets.saveSnippet)) arguments)
  "Ask for the name of the snippet the \"Save selection as snippet\" action saves.
Then have SERVER run COMMAND with it; an empty name lets the server make
one from the text's first words.  ARGUMENTS that already name it pass."
  (let ((argument (and (vectorp arguments) (> (length arguments) 0) (aref arguments 0))))
    (if (or (not (consp argument)) (plist-member argument :name))
        (cl-call-next-method)
      (cl-call-next-method server command
                           (vector (pi-snippets--with-name argument (pi-snippets--read-name)))))))

;;;###autoload
(defun pi-snippets-save-region (beg end &optional name)
  "Save the text between BEG and END as a snippet named NAME.
Interactively, ask for NAME; empty (or nil) lets the server make one
from the text's first words.  The server adds it to the user settings
file through Eglot (`workspace/applyEdit', which Eglot may ask you to
confirm, see `eglot-confirm-server-initiated-edits'); the snippet works
at once, and the edited settings buffer stays unsaved until you save
it.  Return the server's answer, a plist with :name, :uri and :applied."
  (interactive
   (if (use-region-p)
       (list (region-beginning) (region-end) (pi-snippets--read-name))
     (user-error "No active region: select the text to save")))
  (let* ((server (pi-snippets--server-or-lose))
         (argument (list :text (buffer-substring-no-properties (min beg end) (max beg end))))
         (uri (pi-snippets--buffer-uri)))
    (when uri
      (setq argument (plist-put argument :uri uri)))
    (setq argument (pi-snippets--with-name argument (or name "")))
    (let ((result (pi-snippets--request server :workspace/executeCommand
                                        (list :command "pi-snippets.saveSnippet"
                                              :arguments (vector argument)))))
      (when (called-interactively-p 'interactive)
        (message "pi-snippets: %s %%%s"
                 (if (eq (plist-get result :applied) t) "saved" "did not save")
                 (plist-get result :name)))
      result)))

;;;; Editing a snippet

(defvar-local pi-snippets--edit nil
  "In a snippet's buffer: a plist :server :name :value :file :origin.
:value is the text the buffer was opened with (or last saved), which
the server checks the settings file still holds before writing.")

(defvar pi-snippets-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map [remap save-buffer] #'pi-snippets-edit-save)
    (define-key map (kbd "C-c C-c") #'pi-snippets-edit-save)
    map)
  "Keymap of `pi-snippets-edit-mode': saving sends the text to the server.")

(define-minor-mode pi-snippets-edit-mode
  "A snippet's text, saved back to its settings file by \[save-buffer]."
  :lighter " Pi-Snippet"
  :keymap pi-snippets-edit-mode-map)

(defun pi-snippets--uri-to-path (uri)
  "Convert URI to a file name with whichever Eglot function exists."
  (if (fboundp 'eglot-uri-to-path)
      (funcall 'eglot-uri-to-path uri)
    (eglot--uri-to-path uri)))

(defun pi-snippets--open-snippet (server result origin)
  "Show RESULT of pi-snippets.editSnippet (from SERVER) in a buffer; return it.
ORIGIN is the URI of the document the snippet was named in."
  (let* ((name (plist-get result :name))
         (buffer (get-buffer-create (format "*pi-snippet %s*" name))))
    (with-current-buffer buffer
      (when (and pi-snippets-edit-mode (buffer-modified-p))
        (user-error "pi-snippets: %%%s is open with unsaved changes" name))
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (plist-get result :value)))
      (goto-char (point-min))
      (text-mode)
      (pi-snippets-edit-mode 1)
      (setq pi-snippets--edit (list :server server :name name
                                    :value (plist-get result :value)
                                    :file (plist-get result :uri)
                                    :origin origin))
      (set-buffer-modified-p nil))
    (pop-to-buffer-same-window buffer)
    buffer))

;;;###autoload
(defun pi-snippets-edit-snippet (&optional name)
  "Edit the text of the snippet NAME in a buffer of its own.
Interactively (or NAME nil): the marker or settings key at point,
else a snippet picked by name.  The buffer holds the text as Pi
reads it (unescaped); \[save-buffer] there writes it back, escaped,
to the settings file Pi takes the snippet from, through Eglot
\(`workspace/applyEdit'), and saves that file when it had no unsaved
change of its own.  Return the snippet's buffer."
  (interactive)
  (let* ((state pi-snippets--edit)  ; from a snippet's own buffer: its server and origin
         (server (or (plist-get state :server) (pi-snippets--server-or-lose)))
         (origin (if state (plist-get state :origin) (pi-snippets--buffer-uri)))
         (argument (if origin (list :uri origin) (list)))
         result)
    (cond ((and name (not (string-empty-p name)))
           (setq argument (plist-put argument :name (string-remove-prefix "%" name))))
          ((not state)
           (setq argument (plist-put argument :position
                                     (plist-get (eglot--TextDocumentPositionParams) :position)))))
    (when (or (plist-get argument :name) (plist-get argument :position))
      (setq result (pi-snippets--request server :workspace/executeCommand
                                         (list :command "pi-snippets.editSnippet"
                                               :arguments (vector argument)))))
    (unless result
      (let ((names (pi-snippets-snippet-names server)))
        (unless names
          (user-error "pi-snippets: no snippet to edit"))
        (setq argument (plist-put argument :name
                                  (completing-read "Edit snippet: " names nil t)))
        (setq argument (cl-loop for (k v) on argument by #'cddr
                                unless (eq k :position) append (list k v)))
        (setq result (pi-snippets--request server :workspace/executeCommand
                                           (list :command "pi-snippets.editSnippet"
                                                 :arguments (vector argument))))))
    (pi-snippets--open-snippet server result origin)))

(defun pi-snippets-edit-save ()
  "Write the snippet buffer's text back to its settings file.
A refusal (the file changed meanwhile, the snippet is gone) is told in
the echo area and the buffer stays modified: nothing is lost.  Return
non-nil when the text was saved."
  (interactive)
  (unless pi-snippets--edit
    (user-error "pi-snippets: this buffer holds no snippet"))
  (let* ((state pi-snippets--edit)
         (name (plist-get state :name))
         (value (buffer-substring-no-properties (point-min) (point-max)))
         (path (pi-snippets--uri-to-path (plist-get state :file)))
         (file-buffer (get-file-buffer path))
         (had-changes (and file-buffer (buffer-modified-p file-buffer)))
         (argument (list :name name :value value :previous (plist-get state :value)))
         (snippet-buffer (current-buffer))
         result)
    (when (plist-get state :origin)
      (setq argument (plist-put argument :uri (plist-get state :origin))))
    (condition-case err
        (setq result (pi-snippets--request (plist-get state :server) :workspace/executeCommand
                                           (list :command "pi-snippets.setSnippetValue"
                                                 :arguments (vector argument))))
      (jsonrpc-error
       (message "pi-snippets: %%%s not saved: %s" name
                (or (alist-get 'jsonrpc-error-message (cdr err)) (error-message-string err)))
       (setq result nil)))
    (cond
     ((null result) nil)
     ((not (eq (plist-get result :applied) t))
      (message "pi-snippets: %%%s not saved: the edit was not applied" name)
      nil)
     (t
      (with-current-buffer snippet-buffer
        (setq pi-snippets--edit (plist-put (copy-sequence state) :value value))
        (set-buffer-modified-p nil))
      (let ((edited (get-file-buffer path)))
        (when (and edited (not had-changes) (buffer-modified-p edited))
          (with-current-buffer edited (save-buffer))))
      (message "pi-snippets: saved %%%s in %s%s" name path
               (if had-changes " (unsaved there: save it to keep it)" ""))
      t))))

(provide 'pi-snippets)
;;; pi-snippets.el ends here
