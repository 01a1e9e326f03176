// The 404 page: the frame in the interface's language and the address that was asked for.
import {$, initFrame} from '/static/common.js';

initFrame();
$('#nf-path').textContent = location.pathname;
