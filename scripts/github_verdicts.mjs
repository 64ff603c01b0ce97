// GitHub's verdict on each workflow shape, from GitHub's own parser (@actions/workflow-parser).
// Reads [{id, yaml}] as JSON on standard input; writes [{id, errors}] as JSON on standard output.
// A shape is accepted when both parsing and converting it report no error; reusable workflows
// are not fetched, as ci-checks does not fetch them either.
// The parser holds background steps (`background`, `wait`, `wait-all`, `cancel`) behind its
// `allowBackgroundSteps` feature flag; GitHub runs them (changelog of 2026-06-25, "Actions steps
// can now be run in parallel"), so the flag is on, for parsing and converting alike.
import {FeatureFlags} from "@actions/expressions/features";
import {convertWorkflowTemplate, NoOperationTraceWriter} from "@actions/workflow-parser";
import {TemplateContext, TemplateValidationErrors} from "@actions/workflow-parser/templates/template-context";
import {parseWorkflow} from "@actions/workflow-parser/workflows/workflow-parser";
import {getWorkflowSchema} from "@actions/workflow-parser/workflows/workflow-schema";
import {readFileSync} from "node:fs";

const FEATURES = {allowBackgroundSteps: true};

const shapes = JSON.parse(readFileSync(0, "utf8"));
const verdicts = [];
for (const shape of shapes) {
  const featureFlags = new FeatureFlags(FEATURES);
  const context = new TemplateContext(new TemplateValidationErrors(), getWorkflowSchema(), new NoOperationTraceWriter());
  context.state.featureFlags = featureFlags;
  const parsed = parseWorkflow({name: "workflow.yml", content: shape.yaml}, context);
  let errors = parsed.context.errors.getErrors().map(error => error.message);
  if (errors.length === 0 && parsed.value !== undefined) {
    const template = await convertWorkflowTemplate(parsed.context, parsed.value, undefined, {featureFlags});
    errors = (template.errors || []).map(error => error.Message);
  }
  verdicts.push({id: shape.id, errors});
}
process.stdout.write(JSON.stringify(verdicts));
