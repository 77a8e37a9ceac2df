import { Component } from '@angular/core';

// Component styles with a font and an image by url(): the build copies both
// to media/ and the styles (in the chunk's JavaScript) name them.
@Component({
  selector: 'app-report',
  template: `<h1 class="report">report</h1>`,
  styles: `
    @font-face { font-family: Fixture; src: url('../../assets/fixture.woff2') format('woff2'); }
    .report { font-family: Fixture, sans-serif; background: url('../../assets/tile.png'); }
  `,
})
export class Report {}
