import { packageBuild } from '../../scripts/tsup-package';

export default packageBuild({ platforms: true });
