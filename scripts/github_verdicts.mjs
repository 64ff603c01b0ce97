// GitHub's verdict on each workflow shape, from GitHub's own parser (@actions/workflow-parser).
// Reads [{id, yaml}] as JSON on standard input; writes [{id, errors}] as JSON on standard output.
// A shape is accepted when both parsing and converting it report no error; reusable workflows
// are not fetched, as ci-checks does not fetch them either.
import {convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow} from "@actions/workflow-parser";
import {readFileSync} from "node:fs";

const shapes = JSON.parse(readFileSync(0, "utf8"));
const verdicts = [];
for (const shape of shapes) {
  const parsed = parseWorkflow({name: "workflow.yml", content: shape.yaml}, new NoOperationTraceWriter());
  let errors = parsed.context.errors.getErrors().map(error => error.message);
  if (errors.length === 0 && parsed.value !== undefined) {
    const template = await convertWorkflowTemplate(parsed.context, parsed.value, undefined, {});
    errors = (template.errors || []).map(error => error.Message);
  }
  verdicts.push({id: shape.id, errors});
}
process.stdout.write(JSON.stringify(verdicts));
