import { Component } from '@angular/core';
import { Chart } from './chart';

// @defer: the Chart component is split into its own chunk, loaded when the
// browser is idle.
@Component({
  selector: 'app-home',
  imports: [Chart],
  template: `<h1>home</h1>
    @defer (on idle) { <app-chart /> } @placeholder { <p>loading</p> }`,
})
export class Home {}
