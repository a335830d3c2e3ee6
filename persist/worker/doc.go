// Package worker holds the background workers that read the state and submit commands:
// the mail outbox and the ratings fit.
package worker
