// Package agent runs gui_execute_task: the vision loop (capture, settle, ask the
// model, validate, resolve and execute batched actions, record), its memory,
// stuck and loop detection, budgets and the one-task-at-a-time gate.
package agent
