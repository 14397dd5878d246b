package attrrag

// Stage names the event's stage as the protos do ("retrieved", "aligned", ... "final_answer", "done"), or ""
// for an event without one (a stage newer than this client's generated code).
func Stage(ev *AskEvent) string {
	m := ev.ProtoReflect()
	field := m.WhichOneof(m.Descriptor().Oneofs().ByName("stage"))
	if field == nil {
		return ""
	}
	return string(field.Name())
}
