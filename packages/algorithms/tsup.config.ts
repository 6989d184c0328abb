import { packageBuild } from '../../scripts/tsup-package';

// No runtime-specific code here: one build serves Node and browsers.
export default packageBuild({ platforms: false });
