import { Component } from '@angular/core';

@Component({
  selector: 'app-chart',
  template: `<div class="chart">chart</div>`,
  styles: `.chart { color: #963; outline: 1px dashed #963; }`,
})
export class Chart {}
