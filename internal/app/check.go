package app

import (
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// The model wiring, for `guiagent doctor`, which checks a configuration
// without starting a desktop.

// ModelConfigured reports whether c names a model for gui_execute_task.
func ModelConfigured(c config.Config) bool { return modelConfigured(c) }

// AdapterName is the adapter c selects (GUI_AGENT_ADAPTER, else by provider and model).
func AdapterName(c config.Config) string { return adapterName(c) }

// ProfileFor is the coordinate profile of c's model.
func ProfileFor(c config.Config) (geom.Profile, error) { return profileFor(c, adapterName(c), c.Model) }

// NewAdapter builds the model adapter c selects, without contacting the model.
func NewAdapter(c config.Config) (llm.Adapter, error) { return newAdapter(c) }

// NewMemoryModel builds c's memory model, or nil when there is none.
func NewMemoryModel(c config.Config) (llm.TextModel, error) { return newMemoryModel(c) }

// NewGrounder builds c's grounding model, or nil when there is none.
func NewGrounder(c config.Config) (llm.Grounder, error) { return newGrounder(c) }

// VisionModels says which model locates for the vision tools (gui_locate,
// gui_query, gui_assert, gui_wait_for, `target`), or why they are not offered.
func VisionModels(c config.Config) (locateBy string, err error) {
	vm, err := newVision(c)
	return vm.locateBy, err
}
