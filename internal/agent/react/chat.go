package react

// Mode says how the agent answers, as a chat turn records it and the faces
// show it: "offline", or the model as driver/model.
func (a *Agent) Mode() string {
	if a.llm == nil || a.llm.Model == nil {
		return "offline"
	}
	inf := a.llm.Model.Info()
	return inf.Driver + "/" + inf.Model
}
