// Package fail is jail's one-line Error (operation, object, errno, hint; `jail: ` printed before
// it) and the exit statuses that go with it. Both the host and init's setup make them; init's
// travel to the host as JSON.
package fail
