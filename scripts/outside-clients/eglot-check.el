;;; eglot-check.el --- fisk-ls driven by Emacs eglot in batch mode  -*- lexical-binding: t -*-
;; emacs --batch -Q -l eglot-check.el FISK-LS PROJECT FILE   (scripts/outside-clients/eglot.sh)
;; Opens FILE (a markdown file in PROJECT, a git repository) with eglot on FISK-LS, runs the
;; server's commands through workspace/executeCommand, shuts it down, and prints
;; "N passed, N failed" (exit 1 on a failure). FISK_EGLOT_CONFIG: a Lisp value for
;; eglot-workspace-configuration, e.g. ((:fisk :topK 2)); FISK_EGLOT_EVENTS: a file for the
;; JSON-RPC traffic (eglot's events buffer).

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(require 'eglot)
(require 'markdown-mode)
(setq debug-on-error nil)

(defvar fisk-err nil)
(defvar fisk-passed 0)
(defvar fisk-failed 0)
(defun fisk-check (name ok &optional detail)
  (if ok
      (progn (setq fisk-passed (1+ fisk-passed)) (princ (format "ok   - %s\n" name)))
    (setq fisk-failed (1+ fisk-failed))
    (princ (format "FAIL - %s %S\n" name detail))))

(defun fisk-wait (pred seconds)
  "Run the event loop until PRED is non-nil or SECONDS pass; PRED's value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(let* ((args command-line-args-left)
       (fisk-ls (nth 0 args))
       (file (expand-file-name (nth 2 args)))
       (eglot-sync-connect t)
       (eglot-autoreconnect nil)
       (eglot-events-buffer-size 2000000)
       server stderr-text)
  (setq command-line-args-left nil)
  (add-to-list 'eglot-server-programs `(markdown-mode . (,fisk-ls)))
  ;; FISK_EGLOT_CONFIG: a Lisp value for eglot-workspace-configuration, e.g. ((:fisk :topK 2))
  (let ((cfg (getenv "FISK_EGLOT_CONFIG")))
    (when (and cfg (not (string-empty-p cfg)))
      (setq-default eglot-workspace-configuration (car (read-from-string cfg)))))
  (condition-case fisk-err
      (progn
        (find-file file)
        (fisk-check "markdown-mode" (eq major-mode 'markdown-mode) major-mode)
        ;; M-x eglot (eglot-ensure waits for a command loop batch mode lacks)
        (apply #'eglot (eglot--guess-contact))
        (setq server (fisk-wait (lambda () (eglot-current-server)) 30))
        (fisk-check "connected" server)
        (fisk-check "file is managed" (eglot-managed-p))
        (let* ((caps (eglot--capabilities server))
               (commands (plist-get (plist-get caps :executeCommandProvider) :commands)))
          (princ (format "server: %S\ncommands: %S\n"
                         (plist-get (eglot--server-info server) :name) commands))
          (fisk-check "search command offered"
                      (seq-contains-p commands "fisk.knowledge.search") commands))
        ;; wait until the index is built (status says so)
        (let ((built
               (fisk-wait
                (lambda ()
                  (let* ((st (jsonrpc-request server :workspace/executeCommand
                                              '(:command "fisk.knowledge.status")))
                         (root (aref (plist-get st :roots) 0)))
                    (and (eq (plist-get root :built) t)
                         (eq (plist-get st :indexing) :json-false)
                         st)))
                60)))
          (fisk-check "status: built, not indexing" built built))
        (let* ((res (jsonrpc-request
                     server :workspace/executeCommand
                     `(:command "fisk.knowledge.search"
                       :arguments [(:query "how do I restrict a search to one folder"
                                    :also ["paths glob folder relative to the project root"]
                                    :paths ["docs"]
                                    :topK 3)])))
               (results (plist-get res :results))
               (first (and (> (length results) 0) (aref results 0))))
          (princ (format "search status=%s tier=%s\n"
                         (plist-get res :status) (plist-get res :tier)))
          (seq-doseq (r results)
            (princ (format "  %s  %s  foundBy=%S\n" (plist-get r :citation)
                           (plist-get r :section) (plist-get r :foundBy))))
          (fisk-check "search ok with results" (and (equal (plist-get res :status) "ok") first) res)
          (when first
            (let ((shown (jsonrpc-request
                          server :workspace/executeCommand
                          `(:command "fisk.knowledge.show"
                            :arguments [(:citation ,(plist-get first :citation) :context 1)]))))
              (fisk-check "show the first citation"
                          (equal (plist-get shown :citation) (plist-get first :citation)) shown))))
        (let ((res (jsonrpc-request server :workspace/executeCommand
                                    '(:command "fisk.knowledge.search"
                                      :arguments [(:query "token")]))))
          (princ (format "search without topK: %d results\n"
                         (length (plist-get res :results)))))
        ;; a bad argument: a JSON-RPC error, not a hang
        (let ((err (condition-case e
                       (progn (jsonrpc-request server :workspace/executeCommand
                                               '(:command "fisk.knowledge.search"
                                                 :arguments [(:query "x" :topK 50)]))
                              nil)
                     (jsonrpc-error e))))
          (princ (format "topK 50: %S\n" err))
          (fisk-check "topK 50 is InvalidParams"
                      (equal (alist-get 'jsonrpc-error-code (cdr err)) -32602) err))
        ;; eglot's own command entry point (what M-x eglot-execute-command would call)
        (let ((res (eglot-execute-command server "fisk.knowledge.status" nil)))
          (fisk-check "eglot-execute-command status" (plist-get res :roots) res))
        ;; workspace/symbol, when the server offers it
        (when (eglot--server-capable :workspaceSymbolProvider)
          (let ((syms (jsonrpc-request server :workspace/symbol '(:query "Security"))))
            (princ (format "workspace/symbol Security: %d symbols\n" (length syms)))
            (fisk-check "workspace/symbol answers" (vectorp syms) syms)))
        ;; hover on the first line
        (goto-char (point-min))
        (when (eglot--server-capable :hoverProvider)
          (let ((hover (jsonrpc-request server :textDocument/hover
                                        (eglot--TextDocumentPositionParams))))
            (princ (format "hover at 1:0: %S\n" hover))))
        ;; shutdown and exit as eglot-shutdown sends them, then wait for the server to exit
        ;; by itself (eglot-shutdown itself deletes the process right after `exit', so its
        ;; exit status would be the client's SIGKILL, 9)
        (let ((proc (jsonrpc--process server))
              (stderr (jsonrpc-stderr-buffer server)))
          (setf (eglot--shutdown-requested server) t)
          (fisk-check "shutdown answered" (null (jsonrpc-request server :shutdown nil :timeout 5)))
          (jsonrpc-notify server :exit nil)
          (fisk-check "server process exited after exit"
                      (fisk-wait (lambda () (not (process-live-p proc))) 15))
          (princ (format "exit status: %S\n" (process-exit-status proc)))
          (when (buffer-live-p stderr)
            (setq stderr-text (with-current-buffer stderr (buffer-string))))
          (let ((events (jsonrpc-events-buffer server)))
            (when (and (buffer-live-p events) (getenv "FISK_EGLOT_EVENTS"))
              (with-current-buffer events
                (write-region (point-min) (point-max)
                              (getenv "FISK_EGLOT_EVENTS")))))
          (fisk-check "exit status 0"
                      (eql (process-exit-status proc) 0) (process-exit-status proc))))
    (error (fisk-check "no Lisp error" nil fisk-err)))
  (princ (format "--- server stderr ---\n%s--- end of stderr ---\n" (or stderr-text "")))
  (fisk-check "no traceback on stderr"
              (not (string-match-p "Traceback" (or stderr-text ""))) stderr-text))

(princ (format "%d passed, %d failed\n" fisk-passed fisk-failed))
(kill-emacs (if (zerop fisk-failed) 0 1))
