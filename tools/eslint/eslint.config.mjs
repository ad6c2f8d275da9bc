// ESLint's flat config for the app's browser code (lens/{explorer,layout,classroom}_web/*.js):
// ESLint's recommended rules, the browser's globals, an ES module (the component's js is one,
// its default export the function Streamlit calls). scripts/test runs it from the repo root:
//   tools/eslint/node_modules/.bin/eslint -c tools/eslint/eslint.config.mjs \
//     lens/explorer_web lens/layout_web lens/classroom_web
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: globals.browser,
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
];
